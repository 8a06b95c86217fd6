"""Research items and the audits that move them: not_started → queued → running → completed | failed.

An audit is queued inside the caller's transaction and sent to Celery after commit. Each queueing
draws a new `attempt_id`; the task names the attempt it was sent for and acts only on it, so a
duplicate or superseded delivery does nothing. An audit that cannot be sent (broker down) is logged
and its item goes back to what it was before: the caller never sees the failure (see
docs/decisions.md#domain-rules, "Link team"). No sweep queues a lost audit; it can be started again.
"""

from __future__ import annotations

import logging
import uuid
from dataclasses import dataclass
from datetime import timedelta

from django.conf import settings
from django.db import transaction
from django.utils import timezone

from brands.audits import AUDITS
from brands.audits.outcome import AuditFailed, AuditOutcome
from brands.models import Artifact, Brand, ResearchItem, ResearchModule, ResearchStatus
from core.ops.enqueue import enqueue_now

logger = logging.getLogger(__name__)

# Audits every link-team starts; `website` only when the brand has a website URL to read.
DEFAULT_AUDITS = (ResearchModule.BRAND_CLASSIFICATION, ResearchModule.COMPETITORS)


@dataclass(frozen=True)
class _Previous:
    status: str
    error_message: str
    attempt_id: uuid.UUID | None


def audit_modules(*, brand: Brand, declared) -> list[str]:
    """The default audits plus the team-declared ones that exist, in order, without repeats.

    `declared` is the team's `config.audits`; anything that is not a module name is logged and
    skipped: a bad name never fails the call (docs/decisions.md#domain-rules, "Link team").
    """
    modules: list[str] = [str(m) for m in DEFAULT_AUDITS]
    if brand.website_url:
        modules.append(ResearchModule.WEBSITE.value)
    if declared is None:
        return modules
    if not isinstance(declared, list):
        logger.warning("Team config.audits is not a list (%r); ignoring it", type(declared).__name__)
        return modules
    for name in declared:
        if name in ResearchModule.values:
            if name not in modules:
                modules.append(name)
        else:
            logger.warning("Skipping unknown audit %r declared for brand %s", name, brand.id)
    return modules


def audits_queue(*, brand: Brand, modules: list[str]) -> None:
    """Mark the items queued now; send one task per module once the transaction commits."""
    now = timezone.now()
    existing = {item.module: item for item in ResearchItem.objects.select_for_update().filter(brand=brand)}
    queued: list[tuple[str, uuid.UUID, _Previous]] = []
    for module in modules:
        item = existing.get(module)
        previous = (
            _Previous(item.status, item.error_message, item.attempt_id)
            if item
            else _Previous(ResearchStatus.NOT_STARTED, "", None)
        )
        attempt_id = uuid.uuid4()
        ResearchItem.objects.update_or_create(
            brand=brand,
            module=module,
            defaults={
                "status": ResearchStatus.QUEUED,
                "error_message": "",
                "attempt_id": attempt_id,
                "queued_at": now,
            },
        )
        queued.append((module, attempt_id, previous))
    transaction.on_commit(lambda: _send_all(brand.id, queued))


def _send_all(brand_id, queued: list[tuple[str, uuid.UUID, _Previous]]) -> None:
    """One task per audit. When the broker cannot be reached, the rest are not even tried: each
    attempt would only wait out the same connection timeout. No sweep queues a lost audit, so what
    was not sent is undone here."""
    broker_down = False
    for module, attempt_id, previous in queued:
        if not broker_down:
            try:
                if enqueue_now("brands.tasks.run_audit", str(brand_id), module, str(attempt_id)):
                    continue
                broker_down = True
            except Exception:
                logger.warning("Could not start the %s audit of brand %s; skipped", module, brand_id, exc_info=True)
        _undo(brand_id, module, attempt_id, previous)


def _undo(brand_id, module: str, attempt_id: uuid.UUID, previous: _Previous) -> None:
    mine = ResearchItem.objects.filter(brand_id=brand_id, module=module, attempt_id=attempt_id)
    # Never sent: back to what it was. Sent but broke on the way (eager mode): a failure.
    mine.filter(status=ResearchStatus.QUEUED).update(
        status=previous.status,
        error_message=previous.error_message,
        attempt_id=previous.attempt_id,
        updated_at=timezone.now(),
    )
    mine.filter(status=ResearchStatus.RUNNING).update(
        status=ResearchStatus.FAILED,
        error_message="The audit stopped unexpectedly.",
        finished_at=timezone.now(),
        updated_at=timezone.now(),
    )


def _claim(brand_id, module: str, attempt_id) -> bool:
    """queued → running for this attempt. A run that a dead worker left `running` past the hard
    time limit may be taken over by the redelivered task (acks_late)."""
    now = timezone.now()
    mine = ResearchItem.objects.filter(brand_id=brand_id, module=module, attempt_id=attempt_id)
    claimed = mine.filter(status=ResearchStatus.QUEUED).update(
        status=ResearchStatus.RUNNING, started_at=now, updated_at=now
    )
    if claimed:
        return True
    abandoned_before = now - timedelta(seconds=settings.CELERY_TASK_TIME_LIMIT)
    return bool(
        mine.filter(status=ResearchStatus.RUNNING, started_at__lt=abandoned_before).update(
            started_at=now, updated_at=now
        )
    )


def audit_run(*, brand_id, module: str, attempt_id) -> str | None:
    """Run one audit attempt. Returns the final status, or None when there was nothing to do."""
    if not _claim(brand_id, module, attempt_id):
        return None
    brand = Brand.objects.filter(id=brand_id).first()
    if brand is None:
        return None
    try:
        outcome = AUDITS[module](brand)
    except AuditFailed as exc:
        return _finish(brand, module, attempt_id, error=str(exc))
    except Exception:
        logger.exception("The %s audit of brand %s crashed", module, brand_id)
        return _finish(brand, module, attempt_id, error="The audit failed unexpectedly.")
    return _finish(brand, module, attempt_id, outcome=outcome)


@transaction.atomic
def _finish(
    brand: Brand, module: str, attempt_id, *, outcome: AuditOutcome | None = None, error: str = ""
) -> str | None:
    now = timezone.now()
    status = ResearchStatus.FAILED if error else ResearchStatus.COMPLETED
    done = ResearchItem.objects.filter(
        brand=brand, module=module, attempt_id=attempt_id, status=ResearchStatus.RUNNING
    ).update(status=status, error_message=error, finished_at=now, updated_at=now)
    if not done:  # superseded by a newer attempt meanwhile
        return None
    label = ResearchModule(module).label
    if outcome is None:
        Artifact.objects.create(
            brand=brand,
            module=module,
            kind="audit",
            title=f"{label} audit failed",
            summary=error[:500],
            data={"status": ResearchStatus.FAILED, "error": error, "attempt_id": str(attempt_id)},
        )
    else:
        Artifact.objects.create(
            brand=brand,
            module=module,
            kind="audit",
            title=outcome.title,
            summary=outcome.summary[:500],
            data={"status": ResearchStatus.COMPLETED, "attempt_id": str(attempt_id), **outcome.data},
        )
    return status
