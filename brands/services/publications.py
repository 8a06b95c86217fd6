"""Publications (docs/decisions.md#states): preflight → queued (confirm) → processing → succeeded | failed |
needs_attention; preflight/queued → cancelled (cancel, or `expires_at` passed).

Every transition is a conditional UPDATE on the current status, so of two racing requests one wins
and the other gets a 409; every transition emits `publication.status_changed`.
"""

from __future__ import annotations

import hashlib
import json
import logging
from datetime import timedelta
from typing import Any
from uuid import UUID

from django.conf import settings
from django.db import transaction
from django.utils import timezone

from brands.models import Publication, PublicationPhase, PublicationStatus
from brands.providers.publishing import PublishRequest, PublishResult, get_publishing_provider
from brands.selectors.brands import brand_of
from core.http.errors import InvalidState, NotFound
from core.ops.enqueue import enqueue_after_commit, enqueue_now
from webhooks_app.services import event_publish

logger = logging.getLogger(__name__)

S = PublicationStatus
CANCELLABLE = (S.PREFLIGHT, S.QUEUED)
_FINAL_PHASE = {
    S.SUCCEEDED: PublicationPhase.PUBLISHED,
    S.FAILED: PublicationPhase.REJECTED,
    S.NEEDS_ATTENTION: PublicationPhase.ACTION_REQUIRED,
}
PREVIEW_COPY_FIELDS = ("caption", "primary_text", "headline", "description", "link_url", "call_to_action")


def canonical_json(value: Any) -> str:
    return json.dumps(value, sort_keys=True, separators=(",", ":"), ensure_ascii=False)


def payload_hash(payload: dict) -> str:
    """sha256 (hex) of the payload's canonical JSON: sorted keys, no spaces, UTF-8."""
    return hashlib.sha256(canonical_json(payload).encode()).hexdigest()


def _preview(data: dict, platform: str) -> dict:
    copy = data.get("copy") or {}
    return {
        "platform": data.get("platform") or platform,
        "placement": data.get("placement") or "feed",
        "kind": data.get("kind") or "image",
        "media_url": data.get("media_url"),
        "media_sha256": data.get("media_sha256"),
        "content_type": data.get("content_type"),
        "width": data.get("width"),
        "height": data.get("height"),
        "copy": {f: copy.get(f, "") for f in PREVIEW_COPY_FIELDS},
        "duration_s": data.get("duration_s"),
    }


def _emit(publication: Publication, previous: str) -> None:
    event_publish(
        owner=publication.brand.owner,
        event_type="publication.status_changed",
        data={
            "publication_id": str(publication.id),
            "brand_id": str(publication.brand_id),
            "creative_id": str(publication.creative_id),
            "action": publication.action,
            "platform": publication.platform,
            "previous_status": previous,
            "status": publication.status,
            "phase": publication.phase,
            "remote_id": publication.remote_id or None,
            "permalink": publication.permalink or None,
            "error_code": publication.error_code or None,
        },
    )


def _reload(publication_id: UUID) -> Publication:
    return Publication.objects.select_related("brand__owner").get(id=publication_id)


def _owned(owner, publication_id: UUID) -> Publication:
    publication = (
        Publication.objects.select_related("brand__owner").filter(id=publication_id, brand__owner=owner).first()
    )
    if publication is None:
        raise NotFound("No such publication.")
    return publication


@transaction.atomic
def publication_create(*, owner, brand_id: UUID, data: dict[str, Any]) -> Publication:
    """A `preflight` publication: the exact payload that confirm would publish, its hash, what the
    platform rules say about it (as warnings), and when the preflight expires."""
    brand = brand_of(owner, brand_id)
    preview = _preview(data.get("preview") or {}, data["platform"])
    payload = {
        "action": data["action"],
        "platform": data["platform"],
        "creative_id": str(data["creative_id"]),
        "variant_index": data.get("variant_index", 0),
        "destination_id": data["destination_id"],
        "preview": preview,
    }
    problems, warnings = get_publishing_provider().check(payload)
    warnings = [f"{p.code}: {p.message}" for p in problems] + warnings
    now = timezone.now()
    return Publication.objects.create(
        brand=brand,
        creative_id=data["creative_id"],
        variant_index=payload["variant_index"],
        action=data["action"],
        platform=data["platform"],
        status=S.PREFLIGHT,
        phase=PublicationPhase.AWAITING_CONFIRMATION,
        payload=payload,
        payload_hash=payload_hash(payload),
        destination_id=data["destination_id"],
        destination_label=data.get("destination_label", ""),
        preview=preview,
        warnings=warnings,
        expires_at=now + timedelta(minutes=settings.PUBLICATION_PREFLIGHT_MINUTES),
        scheduled_at=data.get("scheduled_at"),
    )


# A publication is published once per payload (which names the creative, its variant, the platform and the
# destination): another confirmed one of the same brand with the same hash is the answer to a second confirm.
ONCE_PER_PAYLOAD = (S.QUEUED, S.PROCESSING, S.SUCCEEDED)


@transaction.atomic
def publication_confirm(*, owner, publication_id: UUID) -> Publication:
    """Queue a preflight for publishing. A payload the brand has already confirmed (queued, processing or
    published) is not published twice: the answer is that earlier publication, and this preflight stays as
    it was (docs/decisions.md#domain-rules). Confirms of one brand take turns on the brand's row, so two
    preflights of one payload confirmed at once publish once."""
    publication = _owned(owner, publication_id)
    brand_of(owner, publication.brand_id, lock=True)
    twin = (
        Publication.objects.filter(
            brand_id=publication.brand_id, payload_hash=publication.payload_hash, status__in=ONCE_PER_PAYLOAD
        )
        .exclude(id=publication.id)
        .order_by("confirmed_at", "id")
        .first()
    )
    if twin is not None and publication.status == S.PREFLIGHT:
        logger.info("publication %s confirms the payload of %s: answered with it", publication.id, twin.id)
        return _reload(twin.id)
    now = timezone.now()
    # A scheduled one waits for its time (publications_requeue sends it then); either waits for a worker
    # PUBLICATION_QUEUED_HOURS from when it is due before it expires, so a backlog does not cancel it.
    later = publication.scheduled_at is not None and publication.scheduled_at > now
    due = publication.scheduled_at if later else now
    moved = Publication.objects.filter(id=publication.id, status=S.PREFLIGHT, expires_at__gt=now).update(
        status=S.QUEUED,
        phase=PublicationPhase.SCHEDULED if later else PublicationPhase.WAITING_FOR_WORKER,
        confirmed_at=now,
        updated_at=now,
        expires_at=due + timedelta(hours=settings.PUBLICATION_QUEUED_HOURS),
    )
    if not moved:
        if publication.status == S.PREFLIGHT:
            raise InvalidState("The preflight has expired; create a new one.")
        raise InvalidState(f"A {publication.status} publication cannot be confirmed.")
    publication = _reload(publication.id)
    _emit(publication, S.PREFLIGHT)
    if not later:
        # Not sent (broker down): it stays queued, the beat queues it again (publications_requeue) or it expires.
        enqueue_after_commit("brands.tasks.publish_publication", str(publication.id))
    return publication


def publications_requeue(*, older_than: timedelta | None = None, limit: int = 500) -> int:
    """Queue the scheduled publications whose time has come, and queue again the publications confirmed
    more than `older_than` ago (default PUBLICATION_REQUEUE_AFTER_SECONDS) that no worker has taken: their
    message was lost, or the broker was down when they were confirmed. Each is queued again at most once per
    `older_than` (its `updated_at` moves); a duplicate run finds it claimed and does nothing. Returns how
    many it queued."""
    if older_than is None:
        older_than = timedelta(seconds=settings.PUBLICATION_REQUEUE_AFTER_SECONDS)
    now = timezone.now()
    scheduled = Publication.objects.filter(status=S.QUEUED, phase=PublicationPhase.SCHEDULED)
    due = list(scheduled.filter(scheduled_at__lte=now).values_list("id", flat=True)[:limit])
    # Due now, in one UPDATE: an old `updated_at` makes the loop below send them at once.
    scheduled.filter(id__in=due).update(phase=PublicationPhase.WAITING_FOR_WORKER, updated_at=now - older_than)
    waiting = Publication.objects.filter(
        status=S.QUEUED,
        phase=PublicationPhase.WAITING_FOR_WORKER,
        updated_at__lte=now - older_than,
        expires_at__gt=now,
    )
    ids = list(waiting.values_list("id", flat=True)[:limit])
    requeued = 0
    for publication_id in ids:
        if Publication.objects.filter(id=publication_id, status=S.QUEUED).update(updated_at=now):
            logger.info("publication %s still queued: queued again", publication_id)
            enqueue_now("brands.tasks.publish_publication", str(publication_id))
            requeued += 1
    return requeued


@transaction.atomic
def publication_cancel(*, owner, publication_id: UUID) -> Publication:
    publication = _owned(owner, publication_id)
    now = timezone.now()
    moved = Publication.objects.filter(id=publication.id, status__in=CANCELLABLE).update(
        status=S.CANCELLED, phase=PublicationPhase.CANCELLED_BY_USER, updated_at=now
    )
    if not moved:
        raise InvalidState(f"A {publication.status} publication cannot be cancelled.")
    previous = publication.status
    publication = _reload(publication.id)
    _emit(publication, previous)
    return publication


def _claim(publication_id: UUID, *, resume: bool) -> Publication | None:
    """queued → processing. A retry of this task (`resume`) and a run a dead worker left
    `processing` past the hard time limit take the row over as it is (the provider is idempotent
    on the publication id)."""
    now = timezone.now()
    with transaction.atomic():
        # A scheduled one is not taken before its time, whatever message arrives.
        moved = (
            Publication.objects.filter(id=publication_id, status=S.QUEUED)
            .exclude(phase=PublicationPhase.SCHEDULED)
            .update(status=S.PROCESSING, phase=PublicationPhase.VALIDATING, updated_at=now)
        )
        if moved:
            publication = _reload(publication_id)
            _emit(publication, S.QUEUED)
            return publication
    stale = now if resume else now - timedelta(seconds=settings.CELERY_TASK_TIME_LIMIT)
    if Publication.objects.filter(id=publication_id, status=S.PROCESSING, updated_at__lte=stale).update(
        phase=PublicationPhase.VALIDATING, updated_at=now
    ):
        return _reload(publication_id)
    return None


def publication_process(*, publication_id: UUID, resume: bool = False) -> str | None:
    """Publish a queued publication through the provider. Returns the final status, or None when
    there was nothing to do (cancelled, already done, or a duplicate run). ProviderUnavailable
    propagates so that the task retries (with `resume`)."""
    publication = _claim(publication_id, resume=resume)
    if publication is None:
        return None
    Publication.objects.filter(id=publication.id, status=S.PROCESSING).update(
        phase=PublicationPhase.PUBLISHING, updated_at=timezone.now()
    )
    result = get_publishing_provider().publish(
        PublishRequest(
            idempotency_key=str(publication.id),
            action=publication.action,
            platform=publication.platform,
            destination_id=publication.destination_id,
            payload=publication.payload,
            payload_hash=publication.payload_hash,
        )
    )
    return publication_finish(publication_id=publication.id, result=result)


@transaction.atomic
def publication_finish(*, publication_id: UUID, result: PublishResult) -> str | None:
    now = timezone.now()
    status = S(result.status)
    moved = Publication.objects.filter(id=publication_id, status=S.PROCESSING).update(
        status=status,
        phase=PublicationPhase.SIMULATED if result.simulated and status == S.SUCCEEDED else _FINAL_PHASE[status],
        remote_id=result.remote_id,
        permalink=result.permalink,
        error_code=result.error_code,
        error_message=result.error_message,
        completed_at=now,
        updated_at=now,
    )
    if not moved:
        return None
    publication = _reload(publication_id)
    if result.warnings:
        merged = list(dict.fromkeys([*publication.warnings, *result.warnings]))
        Publication.objects.filter(id=publication_id).update(warnings=merged)
        publication.warnings = merged
    _emit(publication, S.PROCESSING)
    return status


def publications_expire() -> int:
    """Cancel preflight and queued publications whose `expires_at` has passed. Idempotent: a row
    is moved only while still cancellable, and the lock skips rows a request is changing."""
    now = timezone.now()
    expired = 0
    with transaction.atomic():
        rows = list(
            Publication.objects.select_for_update(skip_locked=True, of=("self",))
            .select_related("brand__owner")
            .filter(status__in=CANCELLABLE, expires_at__lte=now)[:500]
        )
        for publication in rows:
            previous = publication.status
            Publication.objects.filter(id=publication.id).update(
                status=S.CANCELLED, phase=PublicationPhase.EXPIRED, updated_at=now
            )
            publication.status, publication.phase = S.CANCELLED, PublicationPhase.EXPIRED
            _emit(publication, previous)
            expired += 1
    return expired
