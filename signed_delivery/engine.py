"""The signed-delivery engine: claim a due delivery, sign and send its message, record the attempt,
back off on a schedule, and sweep up what a lost message or a dead worker left behind.

A delivery is claimed with a conditional UPDATE that sets `claimed_at` (the claim), so running the task
twice, or a retry arriving while another worker sends, makes one attempt. The attempt row is written
before the HTTP call and completed after it; the outcome is written only while the claim still holds.
No lock is held across the call. What differs between users (the rows, the message, the secrets, the
schedule, what success means) comes from a `Channel` (see docs/architecture.md#signed-delivery-engine).
"""

from __future__ import annotations

import logging
import random
from abc import ABC, abstractmethod
from collections.abc import Iterable, Mapping
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from datetime import datetime, timedelta
from typing import Any, ClassVar
from uuid import UUID

from celery import current_app
from django.db import models, transaction
from django.db.models import F, Q
from django.utils import timezone

from signed_delivery.attempts import Attempt, AttemptStatus
from signed_delivery.sending import CallResult, post_signed

logger = logging.getLogger(__name__)

# A claim older than this belongs to a worker that died mid-attempt (the call itself ends within 15 s).
CLAIM_TIMEOUT = timedelta(minutes=5)
# Due deliveries are queued by their own countdown; the sweep re-queues only those clearly overdue.
OVERDUE_AFTER = timedelta(minutes=1)
SWEEP_BATCH = 500


@dataclass(frozen=True)
class RetrySchedule:
    """Seconds to wait after attempts 1..n failed (each with ±`jitter`); attempt n+1 is the last."""

    delays: tuple[float, ...]
    jitter: float = 0.1

    @property
    def max_attempts(self) -> int:
        return len(self.delays) + 1

    def delay_after(self, attempt_number: int) -> float | None:
        """Seconds until the next attempt after attempt `attempt_number` failed; None when it was the last."""
        if attempt_number >= self.max_attempts:
            return None
        base = self.delays[attempt_number - 1]
        return base * random.uniform(1 - self.jitter, 1 + self.jitter)  # noqa: S311 - jitter, not security


@dataclass(frozen=True)
class Message:
    url: str
    msg_id: str  # `webhook-id`: the same on every retry of one message
    body: bytes
    secrets: list[str]


class Channel(ABC):
    """One kind of signed delivery. A subclass names its models, schedule and task, and fills in the hooks.

    The delivery model has `claimed_at`, `attempt_count` and `next_attempt_at`; the attempt model is an
    `Attempt` with a `delivery` foreign key.
    """

    delivery_model: ClassVar[type[models.Model]]
    attempt_model: ClassVar[type[Attempt]]
    schedule: ClassVar[RetrySchedule]
    task_name: ClassVar[str]  # the registered Celery task making one attempt; it takes the delivery id
    waiting: ClassVar[Q]  # deliveries waiting for their next attempt (claimed once due)
    claim_changes: ClassVar[Mapping[str, Any]] = {}  # written with the claim, beside claimed_at and attempt_count

    def load(self, delivery_id: UUID | str, claim: datetime) -> models.Model | None:
        """The claimed delivery, or None to stop (after settling or releasing it, if the hook decides so)."""
        return self.delivery_model.objects.filter(pk=delivery_id, claimed_at=claim).first()

    def load_together(self, delivery_ids: list, claim: datetime) -> list[models.Model]:
        """`load` of several deliveries claimed together (one query each unless a channel does better)."""
        return [delivery for pk in delivery_ids if (delivery := self.load(pk, claim)) is not None]

    @abstractmethod
    def message(self, delivery, now: datetime) -> Message:
        """What to send for this attempt: URL, message id, body and the secrets to sign it with."""

    def messages(self, deliveries: list, now: datetime) -> list[Message]:
        """`message` of several deliveries (in their order), for a channel that can build them together."""
        return [self.message(delivery, now) for delivery in deliveries]

    def attempt_fields(self, delivery) -> dict[str, Any]:
        """Fields of the attempt row beside `delivery` and `url`."""
        return {"number": delivery.attempt_count}

    def attempts_counted(self, delivery) -> int:
        """Which attempt of the retry schedule this was."""
        return delivery.attempt_count

    def is_permanent(self, result: CallResult) -> bool:
        """A failure no retry can help: 410 Gone says the endpoint is gone for good."""
        return result.status_code == 410

    @abstractmethod
    def settle(self, delivery, claim: datetime, result: CallResult, retry_at: datetime | None) -> None:
        """Write the attempt's outcome (with `delivery_settle`): succeeded, retry at `retry_at`, or failed."""

    def given_back_changes(self, now: datetime) -> dict[str, Any]:
        """Written when the sweep gives back a dead worker's claim, beside claimed_at and next_attempt_at."""
        return {}


def delivery_attempt(
    channel: Channel, *, delivery_id: UUID | str, now: datetime | None = None, claim: datetime | None = None
) -> float | None:
    """Make the next attempt if it is due (or under `claim`, taken already). Returns seconds until the
    next attempt when one is scheduled, else None.

    `now` is the scheduling clock (what is due, which secrets are in their grace period); the
    `webhook-timestamp` header is always the real time of sending.
    """
    now = now or timezone.now()
    if claim is None:
        if not delivery_claim(channel, delivery_id=delivery_id, now=now):
            return None  # not due, already sent, being sent, or gone
        claim = now
    delivery = channel.load(delivery_id, claim)
    if delivery is None:
        return None
    message = channel.message(delivery, now)
    attempt = channel.attempt_model.objects.create(
        delivery=delivery, url=message.url, **channel.attempt_fields(delivery)
    )
    result = _call(channel, delivery, message)
    _complete(attempt, result, timezone.now())
    channel.attempt_model.objects.filter(pk=attempt.pk).update(**{f: getattr(attempt, f) for f in _OUTCOME_FIELDS})
    return _settle_outcome(channel, delivery, claim, result, now)


def deliveries_attempt_together(
    channel: Channel, delivery_ids: Iterable[UUID], *, now: datetime | None = None, senders: int = 8
) -> dict[UUID, float]:
    """Make the due attempt of several deliveries at once, as `delivery_attempt` makes each: the claims in one
    UPDATE, the attempt rows in one INSERT, the calls side by side on up to `senders` threads (which touch no
    database, so no connection or lock is held across a call), then each outcome. Deliveries not claimed here
    (not due, being sent, gone) are left alone. Returns the seconds until the retry of each delivery that has
    one scheduled: queue them with `deliveries_retry_later`."""
    now = now or timezone.now()
    ids = list(dict.fromkeys(delivery_ids))
    if not ids:
        return {}
    channel.delivery_model.objects.filter(
        channel.waiting, pk__in=ids, claimed_at__isnull=True, next_attempt_at__lte=now
    ).update(claimed_at=now, attempt_count=F("attempt_count") + 1, **channel.claim_changes)
    deliveries = channel.load_together(ids, now)
    if not deliveries:
        return {}
    messages = channel.messages(deliveries, now)
    attempts = channel.attempt_model.objects.bulk_create(
        [
            channel.attempt_model(delivery=delivery, url=message.url, **channel.attempt_fields(delivery))
            for delivery, message in zip(deliveries, messages, strict=True)
        ]
    )
    with ThreadPoolExecutor(max_workers=min(senders, len(deliveries)), thread_name_prefix="signed-delivery") as pool:
        results = list(pool.map(lambda pair: _call(channel, *pair), zip(deliveries, messages, strict=True)))
    finished = timezone.now()
    for attempt, result in zip(attempts, results, strict=True):
        _complete(attempt, result, finished)
    channel.attempt_model.objects.bulk_update(attempts, _OUTCOME_FIELDS)
    delays = {}
    for delivery, result in zip(deliveries, results, strict=True):
        delay = _settle_outcome(channel, delivery, now, result, now)
        if delay is not None:
            delays[delivery.pk] = delay
    return delays


def deliveries_retry_later(channel: Channel, delays: Mapping[UUID, float]) -> None:
    """Queue each delivery's next attempt with its countdown (the sweep queues any the broker refused once
    they are overdue)."""
    _queue(channel, delays.items())


_OUTCOME_FIELDS = ["status", "status_code", "duration_ms", "error", "response_excerpt", "finished_at"]


def _call(channel: Channel, delivery, message: Message) -> CallResult:
    try:
        return post_signed(message.url, secrets=message.secrets, msg_id=message.msg_id, body=message.body)
    except Exception as exc:  # a bug must not strand the claim: record it as a failed attempt
        logger.exception("%s %s failed before an answer", channel.delivery_model.__name__, delivery.pk)
        return CallResult(None, f"Internal error: {type(exc).__name__}")


def _complete(attempt: Attempt, result: CallResult, finished: datetime) -> None:
    attempt.status = AttemptStatus.SUCCEEDED if result.ok else AttemptStatus.FAILED
    attempt.status_code = result.status_code
    attempt.duration_ms = result.duration_ms
    attempt.error = result.error[:2000]
    attempt.response_excerpt = result.excerpt
    attempt.finished_at = finished


def _settle_outcome(channel: Channel, delivery, claim: datetime, result: CallResult, now: datetime) -> float | None:
    delay = None
    if not result.ok and not channel.is_permanent(result):
        delay = channel.schedule.delay_after(channel.attempts_counted(delivery))
    channel.settle(delivery, claim, result, now + timedelta(seconds=delay) if delay is not None else None)
    return delay


def delivery_claim(channel: Channel, *, delivery_id: UUID | str, now: datetime) -> bool:
    """Claim a due delivery for one attempt; of concurrent claims exactly one wins."""
    return bool(
        channel.delivery_model.objects.filter(
            channel.waiting, pk=delivery_id, claimed_at__isnull=True, next_attempt_at__lte=now
        ).update(claimed_at=now, attempt_count=F("attempt_count") + 1, **channel.claim_changes)
    )


def delivery_settle(delivery, *, claim: datetime, only_if: Q | None = None, **changes) -> bool:
    """Write an attempt's outcome and give back the claim, if the claim still holds and `only_if` matches.
    False when the delivery moved on meanwhile: then only the claim is given back."""
    rows = type(delivery).objects.filter(only_if or Q(), pk=delivery.pk, claimed_at=claim)
    if rows.update(claimed_at=None, **changes):
        return True
    delivery_release(delivery, claim=claim)
    return False


def delivery_release(delivery, *, claim: datetime) -> None:
    type(delivery).objects.filter(pk=delivery.pk, claimed_at=claim).update(claimed_at=None)


def claims_release_stale(channel: Channel, *, now: datetime) -> list[UUID]:
    """Give back the claims of workers that died mid-attempt (due at once, their attempt marked
    interrupted); returns the deliveries given back. Each is a conditional UPDATE, so two sweeps at
    once give each back once."""
    model = channel.delivery_model
    stale = model.objects.filter(claimed_at__lt=now - CLAIM_TIMEOUT).values_list("pk", "claimed_at")
    released = []
    for delivery_id, claimed_at in list(stale[:SWEEP_BATCH]):
        with transaction.atomic():
            given_back = model.objects.filter(pk=delivery_id, claimed_at=claimed_at).update(
                claimed_at=None, next_attempt_at=now, **channel.given_back_changes(now)
            )
            if given_back:
                channel.attempt_model.objects.filter(delivery_id=delivery_id, status=AttemptStatus.PENDING).update(
                    status=AttemptStatus.FAILED,
                    error="Interrupted: the worker stopped before the attempt finished.",
                    finished_at=now,
                )
                released.append(delivery_id)
    return released


def deliveries_overdue(channel: Channel, *, now: datetime) -> list[UUID]:
    """Unclaimed deliveries due for a while: their queued message was lost."""
    overdue = channel.delivery_model.objects.filter(
        channel.waiting, claimed_at__isnull=True, next_attempt_at__lte=now - OVERDUE_AFTER
    )
    return list(overdue.order_by("next_attempt_at").values_list("pk", flat=True)[:SWEEP_BATCH])


def deliveries_enqueue(channel: Channel, delivery_ids: Iterable[UUID]) -> None:
    """Queue one attempt of each delivery now (the sweep's work); the next sweep finds any the broker refused."""
    _queue(channel, ((delivery_id, None) for delivery_id in dict.fromkeys(delivery_ids)))


def _queue(channel: Channel, countdowns: Iterable[tuple[UUID, float | None]]) -> None:
    """One job per delivery, after its countdown (None: now); stops at the first broker failure, since the
    sweep finds every delivery left without a job."""
    for delivery_id, countdown in countdowns:
        try:
            _registered(channel.task_name).apply_async(args=[str(delivery_id)], countdown=countdown)
        except Exception:
            logger.exception("could not queue %s for %s", channel.task_name, delivery_id)
            break


def _registered(task_name: str):
    if task_name not in current_app.tasks:
        # Celery discovers the apps' task modules lazily; a management command may not have imported them yet.
        current_app.loader.import_default_modules()
    return current_app.tasks[task_name]
