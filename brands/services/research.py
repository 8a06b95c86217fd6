"""Research items and the audits that move them: not_started → queued → running → completed | failed.

An audit is queued inside the caller's transaction and sent to Celery after commit. Each queueing
draws a new `attempt_id`; the task names the attempt it was sent for and acts only on it, so a
duplicate or superseded delivery does nothing. An audit that cannot be sent (broker down) is logged
and its item goes back to what it was before: the caller never sees the failure (see
docs/decisions.md#domain-rules, "Link team"); the caller can read which were not sent (`Dispatch`).

An audit lost after it was sent (the broker lost the message, the worker died) is found by the sweep
(`audits_requeue_lost`, a beat job): an item `queued` for RESEARCH_AUDIT_STALE_SECONDS, or `running` for
CELERY_TASK_TIME_LIMIT plus that, is queued again with a new attempt, at most RESEARCH_AUDIT_MAX_ATTEMPTS
times in all, then `failed` with the reason (docs/decisions.md#audit-sweep). Its owner can also run it
again (`audit_rerun`).
"""

from __future__ import annotations

import logging
import uuid
from dataclasses import dataclass, field
from datetime import timedelta

from django.conf import settings
from django.db import transaction
from django.db.models import Q
from django.utils import timezone

from brands.audits import AUDITS
from brands.audits.outcome import AuditFailed, AuditOutcome
from brands.models import Artifact, Brand, BrandKit, ResearchItem, ResearchModule, ResearchStatus
from brands.selectors.brands import brand_of
from core.http.errors import InvalidState, NotFound, ProviderUnavailable
from core.ops.enqueue import enqueue_now
from teams.models import TeamStatus

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


@dataclass
class Dispatch:
    """What became of the audits queued in a transaction, once it committed: `sent` is False until then."""

    modules: list[str]
    sent: bool = False
    not_started: list[str] = field(default_factory=list)


def audits_queue(*, brand: Brand, modules: list[str]) -> Dispatch:
    """Mark the items queued now; send one task per module once the transaction commits. The returned
    Dispatch says, after the commit, which could not be sent."""
    now = timezone.now()
    dispatch = Dispatch(modules=list(modules))
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
                "attempts": 1,
            },
        )
        queued.append((module, attempt_id, previous))
    transaction.on_commit(lambda: _send_all(brand.id, queued, dispatch))
    return dispatch


def _send_all(brand_id, queued: list[tuple[str, uuid.UUID, _Previous]], dispatch: Dispatch | None = None) -> None:
    """One task per audit. When the broker cannot be reached, the rest are not even tried: each
    attempt would only wait out the same connection timeout. What was not sent is undone here (the
    sweep is for audits lost after they were sent) and named in the Dispatch."""
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
        if dispatch is not None:
            dispatch.not_started.append(module)
    if dispatch is not None:
        dispatch.sent = True


def audit_rerun(*, owner, brand_id, module: str) -> ResearchItem:
    """Run one audit of the owner's brand again. 409 while it is queued or running; otherwise queued now and
    sent after commit. When the queue did not take it (broker down) the item is back as it was and this is a
    503 `provider_unavailable`: the caller is told, and can try again."""
    if module not in ResearchModule.values:
        raise NotFound("No such research module.")
    with transaction.atomic():
        brand = brand_of(owner, brand_id, lock=True)
        item = ResearchItem.objects.filter(brand=brand, module=module).first()
        if item is not None and item.status in (ResearchStatus.QUEUED, ResearchStatus.RUNNING):
            raise InvalidState(f"The {module} audit is already {item.status}.")
        dispatch = audits_queue(brand=brand, modules=[module])
        item = ResearchItem.objects.get(brand=brand, module=module)
    if dispatch.not_started:
        raise ProviderUnavailable("The audit could not be queued (the task queue is unreachable); try again later.")
    return item


def _lost_items(now):
    stale = timedelta(seconds=settings.RESEARCH_AUDIT_STALE_SECONDS)
    running_for = stale + timedelta(seconds=settings.CELERY_TASK_TIME_LIMIT)
    return ResearchItem.objects.filter(
        Q(status=ResearchStatus.QUEUED, queued_at__lt=now - stale)
        | Q(status=ResearchStatus.RUNNING, started_at__lt=now - running_for)
    )


def audits_requeue_lost(*, limit: int = 200) -> dict[str, int]:
    """The sweep (docs/decisions.md#audit-sweep): queue lost audits again, or fail those that used their
    attempts. Rows are taken with SKIP LOCKED, so two beats sweep each item once. An item the broker cannot
    take now stays queued under its new attempt, and the next sweep finds it again."""
    now = timezone.now()
    requeued: list[tuple[uuid.UUID, str, uuid.UUID]] = []
    failed = 0
    with transaction.atomic():
        items = list(_lost_items(now).select_for_update(skip_locked=True).order_by("queued_at")[:limit])
        for item in items:
            if item.attempts >= settings.RESEARCH_AUDIT_MAX_ATTEMPTS:
                failed += (
                    _lost_items(now)
                    .filter(id=item.id)
                    .update(
                        status=ResearchStatus.FAILED,
                        error_message=f"The audit was lost {item.attempts} times (queue or worker); run it again.",
                        finished_at=now,
                        updated_at=now,
                    )
                )
                continue
            attempt_id = uuid.uuid4()
            if (
                _lost_items(now)
                .filter(id=item.id)
                .update(
                    status=ResearchStatus.QUEUED,
                    attempt_id=attempt_id,
                    attempts=item.attempts + 1,
                    queued_at=now,
                    error_message="",
                    updated_at=now,
                )
            ):
                requeued.append((item.brand_id, item.module, attempt_id))
    sent = 0
    for brand_id, module, attempt_id in requeued:
        if not enqueue_now("brands.tasks.run_audit", str(brand_id), module, str(attempt_id)):
            break  # the broker is down: the rest would wait out the same timeout
        sent += 1
    return {"requeued": len(requeued), "sent": sent, "failed": failed}


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


# Teams whose cadence is followed: working ones (a cancelling team runs until its subscription ends).
CADENCE_TEAM_STATUSES = (TeamStatus.ACTIVE, TeamStatus.CANCELLING)


def research_cadence_queue(*, now=None) -> dict[str, int]:
    """The recurring research (docs/decisions.md#team-cadence): for each brand linked (through a kit) to a working
    team with `orchestrator_cadence.research_every_hours`, queue each of its audits (audit_modules: the defaults,
    so competitor discovery, plus the team's config.audits) that last started that long ago or never, and is
    not queued or running now. A brand linked to several such teams follows the shortest cadence. The brand's
    row is locked while its audits are queued, so two beats queue each once."""
    now = now or timezone.now()
    every: dict = {}
    declared: dict = {}
    for kit in BrandKit.objects.filter(team__status__in=CADENCE_TEAM_STATUSES).select_related("team"):
        hours = kit.team.research_every_hours
        if hours is not None and hours < every.get(kit.brand_id, hours + 1):
            every[kit.brand_id] = hours
            config = kit.team.config if isinstance(kit.team.config, dict) else {}
            declared[kit.brand_id] = config.get("audits")
    brands_queued = audits = 0
    for brand_id, hours in every.items():
        with transaction.atomic():
            brand = Brand.objects.select_for_update().filter(id=brand_id).first()
            if brand is None:
                continue
            items = {i.module: i for i in ResearchItem.objects.filter(brand=brand)}
            due_before = now - timedelta(hours=hours)
            due = [
                module
                for module in audit_modules(brand=brand, declared=declared[brand_id])
                if module not in items
                or (
                    items[module].status not in (ResearchStatus.QUEUED, ResearchStatus.RUNNING)
                    and (items[module].queued_at is None or items[module].queued_at <= due_before)
                )
            ]
            if due:
                audits_queue(brand=brand, modules=due)
                brands_queued += 1
                audits += len(due)
    return {"brands": brands_queued, "audits": audits}
