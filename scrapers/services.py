"""Writes for scraping snapshots: trigger, refresh from the provider, poll with backoff, fetch results.

Every state change is a conditional UPDATE on `status = running`, so a final state (ready, failed)
is never rolled back, and of two processes refreshing the same snapshot only one applies a
transition (and only the winner of running → ready enqueues the download of the results).
"""

from __future__ import annotations

import logging
import time
from collections.abc import Callable
from dataclasses import dataclass, replace
from datetime import datetime, timedelta

from django.conf import settings
from django.db import transaction
from django.db.models import F, Q
from django.utils import timezone

from accounts.models import User
from core.http.errors import ProviderError, ProviderUnavailable
from core.ops.enqueue import enqueue_after_commit
from scrapers.models import FINAL_STATUSES, Snapshot, SnapshotStatus, snapshot_status_for
from scrapers.providers import Progress, ScraperProvider, SnapshotNotFound, get_scraper_provider
from scrapers.providers.base import strip_nul

logger = logging.getLogger(__name__)

# The poller's backoff: the first poll 10 s after the trigger, then 20 s, 40 s, ... capped at 5 min.
POLL_FIRST = timedelta(seconds=10)
POLL_MAX = timedelta(minutes=5)
# A poller claims a row by pushing its next_poll_at this far ahead; if it dies mid-poll, the row is
# due again after that, instead of being lost.
POLL_CLAIM = timedelta(minutes=2)
POLL_BATCH = 50
# A beat pass stops claiming rows after this long (the rest wait for the next pass), so it ends well
# inside CELERY_TASK_SOFT_TIME_LIMIT even when a provider answers slowly.
POLL_BUDGET_SECONDS = 60.0


def poll_delay(attempts: int) -> timedelta:
    """The wait after the `attempts`-th poll: 10 s · 2^attempts, at most 5 min."""
    return min(POLL_FIRST * (2 ** min(attempts, 16)), POLL_MAX)


@dataclass(frozen=True)
class SnapshotState:
    """A snapshot as answered by the progress endpoint."""

    snapshot: Snapshot
    live: bool  # the provider was asked during this call
    stale: bool = False  # the provider could not be asked; the stored state may be out of date
    stale_reason: str | None = None


@dataclass(frozen=True)
class PollOutcome:
    snapshot: Snapshot
    outcome: str  # running | ready | failed | unreachable
    detail: str = ""


# --- Trigger --------------------------------------------------------------------------------------------


def snapshot_trigger(
    *, user: User | None, dataset_id: str, inputs: list[dict], provider: ScraperProvider | None = None
) -> Snapshot:
    """Start a collection at the configured provider and track it.

    Raises ProviderError / DatasetNotFound (refused) or ProviderUnavailable (not reachable); then
    nothing is stored. The local provider's job row is written in the same transaction.
    """
    provider = provider or get_scraper_provider()
    with transaction.atomic():
        snapshot_id = provider.trigger(dataset_id=dataset_id, inputs=inputs)
        if Snapshot.objects.filter(provider=provider.name, snapshot_id=snapshot_id).exists():
            raise ProviderError(f"The provider answered with snapshot id {snapshot_id!r}, which is already tracked.")
        now = timezone.now()
        return Snapshot.objects.create(
            provider=provider.name,
            snapshot_id=snapshot_id,
            dataset_id=dataset_id,
            inputs=list(inputs),
            status=SnapshotStatus.RUNNING,
            created_by=user,
            next_poll_at=now + POLL_FIRST,
            deadline_at=now + timedelta(seconds=settings.SCRAPER_SNAPSHOT_DEADLINE_SECONDS),
        )


# --- Refresh (the staff progress endpoint, the admin action) ------------------------------------------------


def snapshot_refresh(
    *, snapshot: Snapshot, provider: ScraperProvider | None = None, now: datetime | None = None
) -> SnapshotState:
    """Ask the provider for the snapshot's progress and store it.

    A final snapshot is answered from the database. When the provider cannot be asked (not
    reachable, or refusing our credentials) the stored state comes back marked stale; this call
    never fails because of the provider. Does not move the poller's schedule.
    """
    if snapshot.status in FINAL_STATUSES:
        return SnapshotState(snapshot=snapshot, live=False)
    now = now or timezone.now()
    try:
        provider = provider or get_scraper_provider(snapshot.provider)
        progress = provider.progress(snapshot.snapshot_id)
    except SnapshotNotFound:
        progress = _lost(snapshot)
    except (ProviderUnavailable, ProviderError) as exc:
        logger.warning("snapshot %s: provider not asked: %s", snapshot.snapshot_id, exc.message)
        return SnapshotState(snapshot=snapshot, live=False, stale=True, stale_reason=exc.message)
    return SnapshotState(snapshot=_apply(snapshot, progress, now=now, count_poll=False), live=True)


def _lost(snapshot: Snapshot) -> Progress:
    return Progress(status="failed", error_message=f"The {snapshot.provider} provider no longer knows this snapshot.")


def _apply(snapshot: Snapshot, progress: Progress, *, now: datetime, count_poll: bool) -> Snapshot:
    """Store a progress report on a running snapshot; past its deadline a running one fails."""
    progress = replace(progress, status=strip_nul(progress.status), error_message=strip_nul(progress.error_message))
    status = snapshot_status_for(progress.status)
    fields: dict = {"provider_status": progress.status[:40], "last_polled_at": now, "updated_at": now}
    if progress.records is not None:
        fields["records_count"] = progress.records
    if progress.errors is not None:
        fields["errors_count"] = progress.errors
    if progress.error_message:
        fields["error_message"] = progress.error_message
    if status is SnapshotStatus.RUNNING and now >= snapshot.deadline_at:
        status = SnapshotStatus.FAILED
        fields["error_message"] = _deadline_message(snapshot, progress.status)
    if status in FINAL_STATUSES:
        fields.update(status=status, completed_at=now, next_poll_at=None)
        if status is SnapshotStatus.FAILED and "error_message" not in fields:
            fields["error_message"] = f"The provider reported the snapshot as {progress.status}."
    if count_poll:
        fields["poll_attempts"] = F("poll_attempts") + 1
        if status is SnapshotStatus.RUNNING:
            fields["next_poll_at"] = now + poll_delay(snapshot.poll_attempts + 1)
    won = Snapshot.objects.filter(pk=snapshot.pk, status=SnapshotStatus.RUNNING).update(**fields)
    if won and status is SnapshotStatus.READY:
        enqueue_after_commit("scrapers.tasks.fetch_snapshot_results", str(snapshot.pk))
    return Snapshot.objects.defer("results").get(pk=snapshot.pk)


def _deadline_message(snapshot: Snapshot, provider_status: str | None) -> str:
    limit = snapshot.deadline_at - snapshot.created_at
    last = f" (last seen: {provider_status})" if provider_status else ""
    return f"Gave up: the snapshot was not ready {_duration(limit)} after it was triggered{last}."


def _duration(delta: timedelta) -> str:
    seconds = int(delta.total_seconds())
    if seconds % 3600 == 0:
        return f"{seconds // 3600} h"
    if seconds % 60 == 0:
        return f"{seconds // 60} min"
    return f"{seconds} s"


# --- The poller -----------------------------------------------------------------------------------------------


def snapshots_poll(
    *,
    now: datetime | None = None,
    due_only: bool = True,
    limit: int = POLL_BATCH,
    budget_seconds: float | None = POLL_BUDGET_SECONDS,
    on_outcome: Callable[[PollOutcome], None] | None = None,
) -> list[PollOutcome]:
    """One polling pass over running snapshots whose `next_poll_at` has come (or all, `due_only=False`).

    Each row is claimed with a conditional UPDATE of its `next_poll_at` (it must still hold the value
    read), so concurrent passes (two beats, a beat and `manage.py poll_snapshots`) never poll the same
    snapshot twice; a pass that finds nothing due does nothing.
    """
    now = now or timezone.now()
    rows = Snapshot.objects.filter(status=SnapshotStatus.RUNNING)
    if due_only:
        rows = rows.filter(Q(next_poll_at__lte=now) | Q(next_poll_at__isnull=True))
    candidates = list(rows.order_by(F("next_poll_at").asc(nulls_first=True)).values_list("pk", "next_poll_at")[:limit])
    outcomes = []
    started = time.monotonic()
    for pk, seen in candidates:
        if budget_seconds is not None and outcomes and time.monotonic() - started >= budget_seconds:
            break  # the rest are still due: the next pass takes them
        claim = Snapshot.objects.filter(pk=pk, status=SnapshotStatus.RUNNING)
        claim = claim.filter(next_poll_at__isnull=True) if seen is None else claim.filter(next_poll_at=seen)
        if not claim.update(next_poll_at=now + POLL_CLAIM):
            continue  # another pass took it, or it finished meanwhile
        outcome = snapshot_poll(snapshot=Snapshot.objects.defer("results").get(pk=pk), now=now)
        outcomes.append(outcome)
        if on_outcome:
            on_outcome(outcome)
    return outcomes


def snapshot_poll(*, snapshot: Snapshot, now: datetime, provider: ScraperProvider | None = None) -> PollOutcome:
    """Poll one (claimed) snapshot: store its progress and schedule the next poll, or fail it past its deadline."""
    try:
        provider = provider or get_scraper_provider(snapshot.provider)
        progress = provider.progress(snapshot.snapshot_id)
    except SnapshotNotFound:
        progress = _lost(snapshot)
    except (ProviderUnavailable, ProviderError) as exc:
        return _poll_failed(snapshot, exc.message, now=now)
    snapshot = _apply(snapshot, progress, now=now, count_poll=True)
    return PollOutcome(snapshot=snapshot, outcome=snapshot.status, detail=snapshot.error_message)


def _poll_failed(snapshot: Snapshot, message: str, *, now: datetime) -> PollOutcome:
    """The provider could not be asked: back off like any other poll; past the deadline, give up."""
    logger.warning("snapshot %s: poll failed: %s", snapshot.snapshot_id, message)
    if now >= snapshot.deadline_at:
        Snapshot.objects.filter(pk=snapshot.pk, status=SnapshotStatus.RUNNING).update(
            status=SnapshotStatus.FAILED,
            error_message=f"{_deadline_message(snapshot, snapshot.provider_status)} Last error: {message}",
            completed_at=now,
            next_poll_at=None,
            last_polled_at=now,
            updated_at=now,
            poll_attempts=F("poll_attempts") + 1,
        )
        snapshot = Snapshot.objects.defer("results").get(pk=snapshot.pk)
        return PollOutcome(snapshot=snapshot, outcome=snapshot.status, detail=message)
    Snapshot.objects.filter(pk=snapshot.pk, status=SnapshotStatus.RUNNING).update(
        next_poll_at=now + poll_delay(snapshot.poll_attempts + 1),
        last_polled_at=now,
        updated_at=now,
        poll_attempts=F("poll_attempts") + 1,
    )
    return PollOutcome(
        snapshot=Snapshot.objects.defer("results").get(pk=snapshot.pk), outcome="unreachable", detail=message
    )


# --- Results ----------------------------------------------------------------------------------------------------


def snapshot_fetch_results(*, snapshot_pk, final_attempt: bool = False) -> bool:
    """Download a ready snapshot's records and keep them (providers expire theirs).

    Returns False when the provider is still building them (try again later); raises
    ProviderUnavailable for transient failures. Idempotent: a snapshot whose results are stored is left alone.
    """
    snapshot = Snapshot.objects.filter(
        pk=snapshot_pk, status=SnapshotStatus.READY, results_fetched_at__isnull=True
    ).first()
    if snapshot is None:
        return True
    problem = None
    try:
        records = get_scraper_provider(snapshot.provider).download(snapshot.snapshot_id)
    except SnapshotNotFound:
        records, problem = None, "the provider no longer has them"
    except ProviderUnavailable as exc:
        if not final_attempt:
            raise
        records, problem = None, exc.message
    except ProviderError as exc:
        records, problem = None, exc.message
    if records is None and problem is None:
        if not final_attempt:
            return False
        problem = "the provider was still building them"
    pending = Snapshot.objects.filter(pk=snapshot.pk, results_fetched_at__isnull=True)
    now = timezone.now()
    if problem:
        pending.update(error_message=f"The results could not be downloaded: {problem}", updated_at=now)
        return True
    fields = {"results": strip_nul(records), "results_fetched_at": now, "updated_at": now}
    if not snapshot.records_count:
        fields["records_count"] = len(records)
    pending.update(**fields)
    return True
