"""Dispatching a paid task to the winning agent's endpoint, and recovering dispatches that got stuck.

One attempt at a time: a conditional UPDATE claims the delivery (`claimed_at`), so running the
Celery task twice, or a retry arriving while another worker sends, makes one attempt. The attempt
row is written before the HTTP call and completed after it. A round's schedule after its first
attempt: 10 s, 1 min, 5 min, 30 min (±10 % jitter); then the delivery has failed (and the
`delivery.failed` event goes out). 410 Gone and a refused URL fail it at once. The request body is
`{"type": "task.dispatched", "timestamp", "data"}`, signed per Standard Webhooks with the agent's
secret(s); `webhook-id` is the same on every attempt of a round.
"""

from __future__ import annotations

import logging
import random
from collections.abc import Callable
from dataclasses import dataclass
from datetime import datetime, timedelta
from typing import Any
from uuid import UUID

from django.conf import settings
from django.db import transaction
from django.db.models import Case, F, PositiveIntegerField, Q, When
from django.utils import timezone

from signed_delivery.attempts import AttemptStatus
from signed_delivery.sending import message_body, post_signed
from tasks_market.models import Delivery, DeliveryAttempt, DeliveryStatus
from tasks_market.models.deliveries import DISPATCHABLE
from tasks_market.services.agents import agent_secrets
from tasks_market.services.events import delivery_data, publish

logger = logging.getLogger(__name__)

RETRY_DELAYS = (10, 60, 5 * 60, 30 * 60)  # seconds, after attempts 1..4 of a round
MAX_ROUND_ATTEMPTS = len(RETRY_DELAYS) + 1
JITTER = 0.1
# A claim older than this belongs to a worker that died mid-attempt (the call itself times out at 15 s).
CLAIM_TIMEOUT = timedelta(minutes=5)
# Due dispatches are queued by their own countdown; the sweep re-queues only those clearly overdue.
OVERDUE_AFTER = timedelta(minutes=1)
# The beat re-sends a stuck dispatch at most this many times; after that only a person retries it.
SWEEP_MAX_RETRIES = 3
SWEEP_BATCH = 200


def retry_delay(round_attempt: int) -> float | None:
    """Seconds to wait after attempt `round_attempt` of a round failed, with jitter; None after the last."""
    if round_attempt >= MAX_ROUND_ATTEMPTS:
        return None
    base = RETRY_DELAYS[round_attempt - 1]
    return base * random.uniform(1 - JITTER, 1 + JITTER)  # noqa: S311 - jitter, not security


def enqueue_dispatch(delivery_id: UUID | str, *, claim: datetime | None = None) -> None:
    """Queue a dispatch attempt once the current transaction commits (with the claim already taken, if given)."""
    from tasks_market.tasks import dispatch_delivery

    def enqueue() -> None:
        # If the broker is down the delivery stays due (or claimed) and the sweep queues it later.
        dispatch_delivery.delay(str(delivery_id), claim.isoformat() if claim else None)

    transaction.on_commit(enqueue, robust=True)


def dispatch_payload(delivery: Delivery) -> dict[str, Any]:
    task, bid = delivery.task, delivery.bid
    return {
        "delivery_id": delivery.id,
        "round": delivery.round,
        "task": {
            "id": task.id,
            "title": task.title,
            "description": task.description,
            "category": task.category,
            "requirements": task.requirements,
            "deadline": task.deadline,
            "budget_amount": task.budget_amount,
            "budget_currency": task.budget_currency,
        },
        "bid": {
            "id": bid.id,
            "agent_id": bid.agent_id,
            "amount": bid.amount,
            "currency": bid.currency,
            "proposal": bid.proposal,
            "eta_hours": bid.eta_hours,
        },
        "revision": {"number": delivery.revision_count, "feedback": delivery.feedback}
        if delivery.revision_count
        else None,
        "submit": {"method": "POST", "path": f"/api/v1/tasks/{task.id}/delivery"},
    }


def _claim(delivery_id: UUID | str, now: datetime) -> bool:
    return bool(
        Delivery.objects.filter(
            pk=delivery_id, status__in=DISPATCHABLE, claimed_at__isnull=True, next_attempt_at__lte=now
        ).update(claimed_at=now, attempt_count=F("attempt_count") + 1, round_attempts=F("round_attempts") + 1)
    )


def _release(delivery: Delivery, claim: datetime) -> None:
    Delivery.objects.filter(pk=delivery.pk, claimed_at=claim).update(claimed_at=None)


def delivery_dispatch_attempt(
    *, delivery_id: UUID | str, claim: datetime | None = None, now: datetime | None = None
) -> float | None:
    """Make the next attempt if it is due (or under `claim`, taken by a retry). Returns seconds until
    the next attempt when one is scheduled, else None."""
    now = now or timezone.now()
    if claim is None:
        if not _claim(delivery_id, now):
            return None  # not due, already dispatched or submitted, being sent, or gone
        claim = now
    delivery = Delivery.objects.select_related("task", "bid", "agent").filter(pk=delivery_id, claimed_at=claim).first()
    if delivery is None:
        return None  # the claim was released by the sweep and may be someone else's now
    if delivery.status not in DISPATCHABLE:
        _release(delivery, claim)
        return None
    agent = delivery.agent
    attempt = DeliveryAttempt.objects.create(
        delivery=delivery, number=delivery.attempt_count, round=delivery.round, url=agent.endpoint_url
    )
    result = post_signed(
        agent.endpoint_url,
        secrets=agent_secrets(agent, now=now),
        msg_id=delivery.message_id,
        body=message_body("task.dispatched", dispatch_payload(delivery)),
    )
    DeliveryAttempt.objects.filter(pk=attempt.pk).update(
        status=AttemptStatus.SUCCEEDED if result.ok else AttemptStatus.FAILED,
        status_code=result.status_code,
        duration_ms=result.duration_ms,
        error=result.error[:2000],
        response_excerpt=result.excerpt,
        finished_at=timezone.now(),
    )
    if result.ok:
        _settle(
            delivery,
            claim,
            "delivery.dispatched",
            status=DeliveryStatus.DISPATCHED,
            dispatched_at=timezone.now(),
            next_attempt_at=None,
            last_error="",
        )
        return None
    permanent = result.refused or result.status_code == 410
    delay = None if permanent else retry_delay(delivery.round_attempts)
    if delay is None:
        _settle(
            delivery,
            claim,
            "delivery.failed",
            status=DeliveryStatus.FAILED,
            failed_at=timezone.now(),
            next_attempt_at=None,
            last_error=result.error[:2000],
        )
        return None
    _settle(delivery, claim, None, next_attempt_at=now + timedelta(seconds=delay), last_error=result.error[:2000])
    return delay


def _settle(delivery: Delivery, claim: datetime, event_type: str | None, **changes) -> None:
    """Apply an attempt's outcome, unless the delivery moved on meanwhile (the agent submitted)."""
    with transaction.atomic():
        moved = Delivery.objects.filter(pk=delivery.pk, claimed_at=claim, status__in=DISPATCHABLE).update(
            claimed_at=None, updated_at=timezone.now(), **changes
        )
        if not moved:
            _release(delivery, claim)
            return
        if event_type:
            delivery.refresh_from_db()
            task = delivery.task
            extra = {"error": delivery.last_error} if event_type == "delivery.failed" else {}
            publish(event_type, delivery_data(delivery, task, **extra), task.poster_id, delivery.agent.owner_id)


def retry_claim(*, delivery_id: UUID | str, now: datetime, by_sweep: bool = False) -> bool:
    """Claim a delivery for a retry attempt and queue it; False when it is not retryable now.

    Retryable (CONTRACT §8): pending or failed, or dispatched longer ago than DELIVERY_STUCK_AFTER
    (a dispatched delivery means its task is delivering). The claim is one conditional UPDATE on the
    delivery row alone, so of concurrent retries exactly one wins; a delivery whose attempt is in
    flight is not retryable. Retrying a stuck dispatch starts a new round (a new `webhook-id`).
    The beat only retries stuck dispatches, and each at most SWEEP_MAX_RETRIES times.
    """
    stuck = Q(status=DeliveryStatus.DISPATCHED, dispatched_at__lt=now - settings.DELIVERY_STUCK_AFTER)
    if by_sweep:
        retryable = stuck & Q(sweep_retries__lt=SWEEP_MAX_RETRIES)
    else:
        retryable = Q(status__in=[DeliveryStatus.PENDING, DeliveryStatus.FAILED]) | stuck
    changes: dict[str, Any] = {
        "status": DeliveryStatus.PENDING,
        "claimed_at": now,
        "round": Case(
            When(status=DeliveryStatus.DISPATCHED, then=F("round") + 1),
            default=F("round"),
            output_field=PositiveIntegerField(),
        ),
        "round_attempts": 1,
        "attempt_count": F("attempt_count") + 1,
        "next_attempt_at": now,
        "failed_at": None,
        "updated_at": now,
    }
    if by_sweep:
        changes["sweep_retries"] = F("sweep_retries") + 1
    claimed = Delivery.objects.filter(retryable, pk=delivery_id, claimed_at__isnull=True).update(**changes)
    if claimed:
        enqueue_dispatch(delivery_id, claim=now)
    return bool(claimed)


@dataclass
class SweepResult:
    released: int = 0  # claims of workers that died mid-attempt, given back and queued again
    retried: int = 0  # stuck dispatches sent again
    requeued: int = 0  # due dispatches whose queued message was lost


def deliveries_sweep(
    *, now: datetime | None = None, progress: Callable[[str, UUID], None] | None = None
) -> SweepResult:
    """The beat job. Every step claims with a conditional UPDATE, so two sweeps at once do each thing once."""
    from tasks_market.tasks import dispatch_delivery

    now = now or timezone.now()
    result = SweepResult()
    report = progress or (lambda kind, delivery_id: None)

    stale = Delivery.objects.filter(claimed_at__lt=now - CLAIM_TIMEOUT).values_list("pk", "claimed_at")
    requeue: list[UUID] = []
    for delivery_id, claimed_at in list(stale[:SWEEP_BATCH]):
        with transaction.atomic():
            if Delivery.objects.filter(pk=delivery_id, claimed_at=claimed_at).update(
                claimed_at=None, next_attempt_at=now, updated_at=now
            ):
                DeliveryAttempt.objects.filter(delivery_id=delivery_id, status=AttemptStatus.PENDING).update(
                    status=AttemptStatus.FAILED,
                    error="Interrupted: the worker stopped before the attempt finished.",
                    finished_at=now,
                )
                result.released += 1
                requeue.append(delivery_id)
                report("released", delivery_id)

    stuck = Delivery.objects.filter(
        status=DeliveryStatus.DISPATCHED,
        dispatched_at__lt=now - settings.DELIVERY_STUCK_AFTER,
        sweep_retries__lt=SWEEP_MAX_RETRIES,
        claimed_at__isnull=True,
    ).values_list("pk", flat=True)
    for delivery_id in list(stuck[:SWEEP_BATCH]):
        with transaction.atomic():
            claimed = retry_claim(delivery_id=delivery_id, now=now, by_sweep=True)
        if claimed:
            result.retried += 1
            report("retried", delivery_id)

    overdue = Delivery.objects.filter(
        status__in=DISPATCHABLE, claimed_at__isnull=True, next_attempt_at__lte=now - OVERDUE_AFTER
    ).values_list("pk", flat=True)
    for delivery_id in list(overdue[:SWEEP_BATCH]):
        result.requeued += 1
        requeue.append(delivery_id)
        report("requeued", delivery_id)
    for delivery_id in dict.fromkeys(requeue):
        try:
            dispatch_delivery.delay(str(delivery_id), None)
        except Exception:  # the broker is down: the next sweep tries again
            logger.exception("could not queue the dispatch of delivery %s", delivery_id)
            break
    return result
