"""Delivering outbound webhooks on the signed-delivery engine, every attempt recorded
(see docs/decisions.md#outbound-webhooks-and-agent-dispatch).

Schedule after the first attempt: 5 s, 5 min, 30 min, 2 h, 5 h, 10 h, 10 h, each ±10 % jitter; then the
delivery has failed. Only 2xx succeeds; 410 Gone disables the subscription. While a worker sends, the
delivery is `sending`.
"""

from __future__ import annotations

from datetime import datetime
from uuid import UUID

from django.db import transaction
from django.db.models import Q
from django.utils import timezone

from core.ops.enqueue import enqueue_after_commit
from core.ops.metrics import WEBHOOK_DELIVERIES, business_count
from signed_delivery.engine import (
    Channel,
    Message,
    RetrySchedule,
    claims_release_stale,
    deliveries_enqueue,
    deliveries_overdue,
    delivery_attempt,
    delivery_settle,
)
from signed_delivery.sending import CallResult
from webhooks_app.models import WebhookAttempt, WebhookDelivery, WebhookDeliveryStatus, WebhookSubscription
from webhooks_app.services import DELIVER_TASK, signing_secrets

RETRY_DELAYS = (5, 5 * 60, 30 * 60, 2 * 3600, 5 * 3600, 10 * 3600, 10 * 3600)  # seconds, after attempts 1..7
SCHEDULE = RetrySchedule(RETRY_DELAYS)
MAX_ATTEMPTS = SCHEDULE.max_attempts


class WebhookChannel(Channel):
    delivery_model = WebhookDelivery
    attempt_model = WebhookAttempt
    schedule = SCHEDULE
    task_name = DELIVER_TASK
    waiting = Q(status=WebhookDeliveryStatus.PENDING)
    claim_changes = {"status": WebhookDeliveryStatus.SENDING}

    def load(self, delivery_id: UUID | str, claim: datetime) -> WebhookDelivery | None:
        delivery = (
            WebhookDelivery.objects.select_related("subscription", "event")
            .filter(pk=delivery_id, claimed_at=claim)
            .first()
        )
        if delivery is not None and not delivery.subscription.is_active:
            delivery_settle(
                delivery,
                claim=claim,
                status=WebhookDeliveryStatus.FAILED,
                last_error="The subscription is disabled.",
                completed_at=timezone.now(),
            )
            return None
        return delivery

    def message(self, delivery: WebhookDelivery, now: datetime) -> Message:
        subscription = delivery.subscription
        return Message(
            url=subscription.url,
            msg_id=delivery.message_id,
            body=delivery.event.body.encode(),
            secrets=signing_secrets(subscription, now=now),
        )

    def settle(self, delivery: WebhookDelivery, claim: datetime, result: CallResult, retry_at) -> None:
        error = result.error[:2000]
        if result.ok:
            changes = {"status": WebhookDeliveryStatus.SUCCEEDED, "last_error": "", "completed_at": timezone.now()}
        elif result.status_code == 410:
            _disable(delivery.subscription, "The endpoint answered 410 Gone.")
            changes = {
                "status": WebhookDeliveryStatus.FAILED,
                "last_error": "The endpoint answered 410 Gone; the subscription was disabled.",
                "completed_at": timezone.now(),
            }
        elif retry_at is None:
            changes = {"status": WebhookDeliveryStatus.FAILED, "last_error": error, "completed_at": timezone.now()}
        else:
            changes = {"status": WebhookDeliveryStatus.PENDING, "last_error": error, "next_attempt_at": retry_at}
        delivery_settle(delivery, claim=claim, last_status_code=result.status_code, **changes)
        outcome = "retrying" if changes["status"] == WebhookDeliveryStatus.PENDING else changes["status"]
        business_count(WEBHOOK_DELIVERIES, outcome=outcome)

    def given_back_changes(self, now: datetime) -> dict:
        return {"status": WebhookDeliveryStatus.PENDING}


CHANNEL = WebhookChannel()


def _disable(subscription: WebhookSubscription, reason: str) -> None:
    WebhookSubscription.objects.filter(pk=subscription.pk, is_active=True).update(
        is_active=False, disabled_reason=reason, disabled_at=timezone.now(), updated_at=timezone.now()
    )


def webhook_delivery_attempt(*, delivery_id: UUID | str, now: datetime | None = None) -> float | None:
    """Make the next attempt of a delivery if it is due. Returns seconds until the retry, if one is due."""
    return delivery_attempt(CHANNEL, delivery_id=delivery_id, now=now)


@transaction.atomic
def webhook_delivery_replay(*, delivery_id: UUID | str) -> bool:
    """Send a delivery again now (staff action). An exhausted delivery gets exactly one more attempt."""
    updated = (
        WebhookDelivery.objects.filter(pk=delivery_id)
        .exclude(status=WebhookDeliveryStatus.SENDING)
        .update(status=WebhookDeliveryStatus.PENDING, next_attempt_at=timezone.now(), completed_at=None)
    )
    if updated:
        enqueue_after_commit(DELIVER_TASK, str(delivery_id))
    return bool(updated)


def webhook_deliveries_sweep(*, now: datetime | None = None) -> int:
    """Recover what a lost message or a dead worker left behind; returns how many were queued."""
    now = now or timezone.now()
    due = dict.fromkeys([*claims_release_stale(CHANNEL, now=now), *deliveries_overdue(CHANNEL, now=now)])
    deliveries_enqueue(CHANNEL, due)
    return len(due)
