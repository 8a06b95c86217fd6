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

from brands.models import (
    BrandKit,
    ConnectedAccount,
    ConnectedPlatform,
    ConnectionHealth,
    Publication,
    PublicationPhase,
    PublicationStatus,
)
from brands.providers.publishing import PublishRequest, PublishResult, get_publishing_provider
from brands.providers.social import PlatformRefused, TokenExpired, content_of, social_adapter
from brands.selectors.brands import brand_of
from brands.services.connections import connection_record_health, connection_refresh
from core.http.errors import InvalidState, NotFound
from core.ops.enqueue import enqueue_after_commit, enqueue_now
from teams.models import OperationMode
from webhooks_app.services import event_publish

logger = logging.getLogger(__name__)

S = PublicationStatus
SUPERVISED = OperationMode.SUPERVISED
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
    if needs_approval(publication.brand_id):
        # A supervised team's brand: queued, waiting for the owner's approval, and it does not expire while it
        # waits: publications_expire skips the phase, approve sets a new expires_at
        # (docs/decisions.md#publication-approval).
        moved = Publication.objects.filter(id=publication.id, status=S.PREFLIGHT, expires_at__gt=now).update(
            status=S.QUEUED, phase=PublicationPhase.AWAITING_APPROVAL, confirmed_at=now, updated_at=now
        )
        if not moved:
            _refuse_confirm(publication)
        publication = _reload(publication.id)
        _emit(publication, S.PREFLIGHT)
        return publication
    moved = _release(publication, now=now, status=S.PREFLIGHT, confirmed_at=now)
    if not moved:
        _refuse_confirm(publication)
    publication = _reload(publication.id)
    _emit(publication, S.PREFLIGHT)
    return publication


def _refuse_confirm(publication: Publication) -> None:
    if publication.status == S.PREFLIGHT:
        raise InvalidState("The preflight has expired; create a new one.")
    raise InvalidState(f"A {publication.status} publication cannot be confirmed.")


def _release(publication: Publication, *, now, **match) -> int:
    """Hand a confirmed (and, when it had to be, approved) publication to the publisher: a scheduled one waits
    for its time (publications_requeue sends it then); either waits for a worker PUBLICATION_QUEUED_HOURS from
    when it is due before it expires, so a backlog does not cancel it."""
    later = publication.scheduled_at is not None and publication.scheduled_at > now
    due = publication.scheduled_at if later else now
    fields = {k: v for k, v in match.items() if k == "confirmed_at"}
    match = {k: v for k, v in match.items() if k != "confirmed_at"}
    queryset = Publication.objects.filter(id=publication.id, **match)
    if match.get("status") == S.PREFLIGHT:
        queryset = queryset.filter(expires_at__gt=now)
    moved = queryset.update(
        status=S.QUEUED,
        phase=PublicationPhase.SCHEDULED if later else PublicationPhase.WAITING_FOR_WORKER,
        updated_at=now,
        expires_at=due + timedelta(hours=settings.PUBLICATION_QUEUED_HOURS),
        **fields,
    )
    if moved and not later:
        # Not sent (broker down): it stays queued, the beat queues it again (publications_requeue) or it expires.
        enqueue_after_commit("brands.tasks.publish_publication", str(publication.id))
    return moved


def needs_approval(brand_id: UUID) -> bool:
    """A brand whose kit is linked to a team in supervised mode publishes only what its owner approved."""
    return BrandKit.objects.filter(brand_id=brand_id, team__operation_mode=SUPERVISED).exists()


@transaction.atomic
def publication_approve(*, owner, publication_id: UUID) -> Publication:
    """The brand owner approves a confirmed publication that waits for approval: it goes to the publisher (or
    waits for its scheduled time). Approving an approved one again answers it as it is."""
    publication = _owned(owner, publication_id)
    now = timezone.now()
    if not _release(publication, now=now, status=S.QUEUED, phase=PublicationPhase.AWAITING_APPROVAL):
        if publication.status == S.QUEUED and publication.phase != PublicationPhase.AWAITING_APPROVAL:
            return publication  # approved already (or never needed it)
        raise InvalidState(f"A {publication.status} publication is not waiting for approval.")
    publication = _reload(publication.id)
    _emit(publication, S.QUEUED)
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
            .exclude(phase__in=(PublicationPhase.SCHEDULED, PublicationPhase.AWAITING_APPROVAL))
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
        publication = _reload(publication_id)
        publication.resumed = True  # an attempt was started before: the platform may already hold the post
        return publication
    return None


def publication_process(*, publication_id: UUID, resume: bool = False) -> str | None:
    """Publish a queued publication through the provider. Returns the final status, or None when
    there was nothing to do (cancelled, already done, or a duplicate run). ProviderUnavailable
    propagates so that the task retries (with `resume`)."""
    publication = _claim(publication_id, resume=resume)
    if publication is None:
        return None
    # "Attempt started", in its own short UPDATE: no lock is held across the platform call.
    Publication.objects.filter(id=publication.id, status=S.PROCESSING).update(
        phase=PublicationPhase.PUBLISHING, updated_at=timezone.now()
    )
    connection = _connection_for(publication)
    if connection is not None:
        result = _publish_through(connection, publication, resumed=getattr(publication, "resumed", False))
    else:
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


# The connected-account platform a publication's platform posts through (docs/decisions.md#publishing-adapters).
CONNECTED_PLATFORM = {
    "facebook": ConnectedPlatform.FACEBOOK_PAGE,
    "instagram": ConnectedPlatform.INSTAGRAM,
    "linkedin": ConnectedPlatform.LINKEDIN,
}


def _connection_for(publication: Publication) -> ConnectedAccount | None:
    """The brand's connected account that is the publication's destination; None: the configured provider (also
    for a simulated connection, made through the local OAuth stand-in: docs/decisions.md#connecting-accounts-oauth)."""
    platform = CONNECTED_PLATFORM.get(publication.platform)
    if platform is None or publication.action != "social_publish":
        return None
    return ConnectedAccount.objects.filter(
        brand_id=publication.brand_id, platform=platform, account_id=publication.destination_id, simulated=False
    ).first()


def _publish_through(connection: ConnectedAccount, publication: Publication, *, resumed: bool) -> PublishResult:
    """Post through the platform's API. A resumed attempt first looks for the post at the platform (the answer
    of an earlier attempt may have been lost after the platform stored it) and posts only when it is not there
    (docs/decisions.md#publication-lookup-on-resume). Rate limits and network failures raise (the task retries
    with back-off); an expired token marks the connection and fails the publication."""
    problems, warnings = get_publishing_provider().check(publication.payload)
    if problems:
        first = next((p for p in problems if p.status == S.FAILED), problems[0])
        return PublishResult(status=first.status, error_code=first.code, error_message=first.message, warnings=warnings)
    adapter = social_adapter(connection.platform)
    content = content_of(publication.payload)
    # A token past its expiry, or one the platform refuses, is refreshed once before giving up
    # (docs/decisions.md#token-refresh-and-health); the refresh holds no lock either.
    current, refreshable = connection, bool(connection.refresh_token_encrypted)
    if refreshable and connection.token_expires_at and connection.token_expires_at <= timezone.now():
        current, refreshable = connection_refresh(connection_id=connection.id), False
    try:
        post = None
        for attempt in (1, 2):
            if current is None:  # the refresh was refused (the connection is marked): the grant is gone
                raise TokenExpired("")
            token, account = current.access_token, current.account_id
            try:
                if resumed and attempt == 1:
                    since = publication.confirmed_at or publication.created_at
                    post = adapter.find_post(token=token, account_id=account, content=content, since=since)
                    if post is not None:
                        logger.info(
                            "publication %s found at the platform as %s: not posted again",
                            publication.id,
                            post.remote_id,
                        )
                if post is None:
                    post = adapter.publish(token=token, account_id=account, content=content)
                break
            except TokenExpired:
                if not refreshable or attempt == 2:
                    raise
                current, refreshable = connection_refresh(connection_id=connection.id), False
    except TokenExpired as exc:
        if current is not None:
            connection_record_health(connection_id=connection.id, health=ConnectionHealth.TOKEN_EXPIRED, error=str(exc))
        return PublishResult(
            status=S.FAILED,
            error_code="connection_expired",
            error_message=f"The {connection.get_platform_display()} connection's token expired or was revoked: "
            "connect the account again, then publish again.",
            warnings=warnings,
        )
    except PlatformRefused as exc:
        connection_record_health(connection_id=connection.id, health=ConnectionHealth.ERROR, error=exc.message)
        return PublishResult(status=S.FAILED, error_code=exc.code[:50], error_message=exc.message, warnings=warnings)
    connection_record_health(connection_id=connection.id, health=ConnectionHealth.HEALTHY)
    return PublishResult(status=S.SUCCEEDED, remote_id=post.remote_id, permalink=post.permalink, warnings=warnings)


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
            .filter(status__in=CANCELLABLE, expires_at__lte=now)
            .exclude(phase=PublicationPhase.AWAITING_APPROVAL)[:500]
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
