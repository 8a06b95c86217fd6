"""Dispatching a paid task to the winning agent's endpoint on the signed-delivery engine, and recovering
dispatches that got stuck (see docs/decisions.md#outbound-webhooks-and-agent-dispatch).

A round's schedule after its first attempt: 10 s, 1 min, 5 min, 30 min (±10 % jitter); then the delivery
has failed (and the `delivery.failed` event goes out). 410 Gone and a refused URL fail it at once. The
request body is `{"type": "task.dispatched", "timestamp", "data"}`, signed with the agent's secret(s);
`webhook-id` is the same on every attempt of a round. An attempt's outcome is written only while the
delivery is still waiting for dispatch (the agent may have submitted meanwhile).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from datetime import datetime, timedelta
from typing import Any
from uuid import UUID

from django.conf import settings
from django.db import transaction
from django.db.models import Case, F, PositiveIntegerField, Q, When
from django.utils import timezone

from core.ops.enqueue import enqueue_after_commit
from core.ops.metrics import AGENT_DISPATCHES, business_count
from signed_delivery.engine import (
    SWEEP_BATCH,
    Channel,
    Message,
    RetrySchedule,
    claims_release_stale,
    deliveries_enqueue,
    deliveries_overdue,
    delivery_attempt,
    delivery_release,
    delivery_settle,
)
from signed_delivery.sending import CallResult, message_body
from tasks_market.models import Delivery, DeliveryAttempt, DeliveryStatus
from tasks_market.models.deliveries import DISPATCHABLE
from tasks_market.services.agents import agent_secrets
from tasks_market.services.announcements import delivery_data, publish

RETRY_DELAYS = (10, 60, 5 * 60, 30 * 60)  # seconds, after attempts 1..4 of a round
SCHEDULE = RetrySchedule(RETRY_DELAYS)
MAX_ROUND_ATTEMPTS = SCHEDULE.max_attempts
# The beat re-sends a stuck dispatch at most this many times; after that only a person retries it.
SWEEP_MAX_RETRIES = 3
# The Celery task making one dispatch attempt (tasks_market.tasks); queued by name, after commit.
DISPATCH_TASK = "tasks_market.tasks.dispatch_delivery"


def enqueue_dispatch(delivery_id: UUID | str, *, claim: datetime | None = None) -> None:
    """Queue a dispatch attempt once the current transaction commits (with the claim already taken, if given).
    If the broker is down the delivery stays due (or claimed) and the sweep queues it later."""
    enqueue_after_commit(DISPATCH_TASK, str(delivery_id), claim.isoformat() if claim else None)


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


class DispatchChannel(Channel):
    delivery_model = Delivery
    attempt_model = DeliveryAttempt
    schedule = SCHEDULE
    task_name = DISPATCH_TASK
    waiting = Q(status__in=DISPATCHABLE)
    claim_changes = {"round_attempts": F("round_attempts") + 1}

    def load(self, delivery_id: UUID | str, claim: datetime) -> Delivery | None:
        delivery = (
            Delivery.objects.select_related("task", "bid", "agent").filter(pk=delivery_id, claimed_at=claim).first()
        )
        if delivery is not None and delivery.status not in DISPATCHABLE:
            delivery_release(delivery, claim=claim)
            return None
        return delivery  # None: the claim was released by the sweep and may be someone else's now

    def message(self, delivery: Delivery, now: datetime) -> Message:
        return Message(
            url=delivery.agent.endpoint_url,
            msg_id=delivery.message_id,
            body=message_body("task.dispatched", dispatch_payload(delivery)),
            secrets=agent_secrets(delivery.agent, now=now),
        )

    def attempt_fields(self, delivery: Delivery) -> dict[str, Any]:
        return {"number": delivery.attempt_count, "round": delivery.round}

    def attempts_counted(self, delivery: Delivery) -> int:
        return delivery.round_attempts

    def is_permanent(self, result: CallResult) -> bool:
        return result.refused or super().is_permanent(result)

    def settle(self, delivery: Delivery, claim: datetime, result: CallResult, retry_at: datetime | None) -> None:
        error = result.error[:2000]
        if result.ok:
            changes = {"status": DeliveryStatus.DISPATCHED, "dispatched_at": timezone.now(), "next_attempt_at": None}
            event_type = "delivery.dispatched"
        elif retry_at is None:
            changes = {"status": DeliveryStatus.FAILED, "failed_at": timezone.now(), "next_attempt_at": None}
            event_type = "delivery.failed"
        else:
            changes, event_type = {"next_attempt_at": retry_at}, None
        with transaction.atomic():
            moved = delivery_settle(
                delivery,
                claim=claim,
                only_if=Q(status__in=DISPATCHABLE),
                last_error=error,
                updated_at=timezone.now(),
                **changes,
            )
            business_count(AGENT_DISPATCHES, outcome=event_type.removeprefix("delivery.") if event_type else "retrying")
            if moved and event_type:
                delivery.refresh_from_db()
                task = delivery.task
                extra = {"error": delivery.last_error} if event_type == "delivery.failed" else {}
                publish(event_type, delivery_data(delivery, task, **extra), task.poster_id, delivery.agent.owner_id)

    def given_back_changes(self, now: datetime) -> dict[str, Any]:
        return {"updated_at": now}


CHANNEL = DispatchChannel()


def delivery_dispatch_attempt(
    *, delivery_id: UUID | str, claim: datetime | None = None, now: datetime | None = None
) -> float | None:
    """Make the next attempt if it is due (or under `claim`, taken by a retry). Returns seconds until
    the next attempt when one is scheduled, else None."""
    return delivery_attempt(CHANNEL, delivery_id=delivery_id, now=now, claim=claim)


def retry_claim(*, delivery_id: UUID | str, now: datetime, by_sweep: bool = False) -> bool:
    """Claim a delivery for a retry attempt and queue it; False when it is not retryable now.

    Retryable (see docs/decisions.md#states): pending or failed, or dispatched more than
    DELIVERY_STUCK_AFTER_SECONDS ago (a dispatched delivery means its task is delivering). The claim is
    one conditional UPDATE on the delivery row alone, so of concurrent retries exactly one wins; a delivery
    whose attempt is in flight is not retryable. Retrying a stuck dispatch starts a new round (a new `webhook-id`).
    The beat only retries stuck dispatches, and each at most SWEEP_MAX_RETRIES times.
    """
    stuck = Q(
        status=DeliveryStatus.DISPATCHED,
        dispatched_at__lt=now - timedelta(seconds=settings.DELIVERY_STUCK_AFTER_SECONDS),
    )
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
    now = now or timezone.now()
    report = progress or (lambda kind, delivery_id: None)

    released = claims_release_stale(CHANNEL, now=now)
    for delivery_id in released:
        report("released", delivery_id)

    retried = 0
    stuck = Delivery.objects.filter(
        status=DeliveryStatus.DISPATCHED,
        dispatched_at__lt=now - timedelta(seconds=settings.DELIVERY_STUCK_AFTER_SECONDS),
        sweep_retries__lt=SWEEP_MAX_RETRIES,
        claimed_at__isnull=True,
    ).values_list("pk", flat=True)
    for delivery_id in list(stuck[:SWEEP_BATCH]):
        with transaction.atomic():
            claimed = retry_claim(delivery_id=delivery_id, now=now, by_sweep=True)
        if claimed:
            retried += 1
            report("retried", delivery_id)

    overdue = deliveries_overdue(CHANNEL, now=now)
    for delivery_id in overdue:
        report("requeued", delivery_id)
    deliveries_enqueue(CHANNEL, [*released, *overdue])
    return SweepResult(released=len(released), retried=retried, requeued=len(overdue))
