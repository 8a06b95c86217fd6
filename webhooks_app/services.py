"""Writes for outbound webhooks: subscriptions, their secrets, and publishing events
(see docs/decisions.md#outbound-webhooks-and-agent-dispatch).

Domain code publishes with `event_publish(owner=..., event_type=..., data=...)` from inside its own
transaction: the event is written with the change, and nothing is sent unless that transaction commits.
"""

from __future__ import annotations

import logging
import uuid
from typing import Any
from uuid import UUID

from django.contrib.auth import get_user_model
from django.db import transaction
from django.utils import timezone

from core.http.errors import Conflict, NotFound
from core.ops.enqueue import enqueue_after_commit
from signed_delivery.sending import message_body
from signed_delivery.signing import ROTATION_GRACE, new_secret
from signed_delivery.signing import signing_secrets as current_secrets
from webhooks_app.event_types import EVENT_TYPES
from webhooks_app.models import WebhookDelivery, WebhookDeliveryStatus, WebhookEvent, WebhookSubscription

logger = logging.getLogger(__name__)

MAX_SUBSCRIPTIONS_PER_OWNER = 100
# The Celery task making one attempt of a delivery (webhooks_app.tasks); queued by name, after commit.
DELIVER_TASK = "webhooks_app.tasks.deliver_webhook"


class SubscriptionLimitReached(Conflict):
    code = "subscription_limit"
    default_message = f"You already have {MAX_SUBSCRIPTIONS_PER_OWNER} webhook subscriptions; delete one first."


# --- Subscriptions -------------------------------------------------------------------------------


@transaction.atomic
def webhook_subscription_create(*, owner, url: str, events: list[str], description: str = "") -> WebhookSubscription:
    """A new subscription; its `secret` is shown to the owner once, in the response to this call."""
    # Serialise an owner's creations so the cap holds under concurrent requests.
    get_user_model().objects.select_for_update().filter(pk=owner.pk).first()
    if WebhookSubscription.objects.filter(owner=owner).count() >= MAX_SUBSCRIPTIONS_PER_OWNER:
        raise SubscriptionLimitReached()
    unique_events = list(dict.fromkeys(events))
    unknown = sorted(set(unique_events) - set(EVENT_TYPES))
    if unknown:
        raise ValueError(f"unknown event types: {', '.join(unknown)}")
    return WebhookSubscription.objects.create(
        owner=owner, url=url, events=unique_events, description=description, secret=new_secret()
    )


def _owned(owner, subscription_id: UUID, *, lock: bool = False) -> WebhookSubscription:
    rows = WebhookSubscription.objects.select_for_update() if lock else WebhookSubscription.objects
    subscription = rows.filter(owner=owner, id=subscription_id).first()
    if subscription is None:
        raise NotFound()
    return subscription


@transaction.atomic
def webhook_subscription_delete(*, owner, subscription_id: UUID) -> None:
    """Gone at once, with its delivery history; retries still queued find nothing and stop."""
    _owned(owner, subscription_id, lock=True).delete()


@transaction.atomic
def webhook_subscription_rotate_secret(*, owner, subscription_id: UUID, now=None) -> WebhookSubscription:
    """A new secret (shown once). The current one keeps signing beside it for ROTATION_GRACE.

    Rotating again within the grace period drops the oldest secret: only the last two ever sign.
    """
    now = now or timezone.now()
    subscription = _owned(owner, subscription_id, lock=True)
    subscription.previous_secret = subscription.secret
    subscription.previous_secret_expires_at = now + ROTATION_GRACE
    subscription.secret = new_secret()
    subscription.save(update_fields=["secret", "previous_secret", "previous_secret_expires_at", "updated_at"])
    return subscription


ACCOUNT_CLOSED = "The account was closed."


def webhook_subscriptions_wind_down(*, user) -> int:
    """The closing step of webhooks (accounts.closure), inside the close's transaction: every subscription
    of the account is disabled, kept with its history. Events are written for active subscriptions only,
    and a delivery already queued finds its subscription disabled and is not sent."""
    now = timezone.now()
    return WebhookSubscription.objects.filter(owner=user, is_active=True).update(
        is_active=False, disabled_reason=ACCOUNT_CLOSED, disabled_at=now, updated_at=now
    )


def signing_secrets(subscription: WebhookSubscription, *, now=None) -> list[str]:
    """The secrets that sign a message now: the current one, plus the previous one during its grace."""
    return current_secrets(
        secret=subscription.secret,
        previous_secret=subscription.previous_secret,
        previous_expires_at=subscription.previous_secret_expires_at,
        now=now or timezone.now(),
    )


# --- Publishing ----------------------------------------------------------------------------------


def event_publish(*, owner, event_type: str, data: dict[str, Any]) -> None:
    """Send `event_type` with `data` to the owner's matching subscriptions once the caller commits.

    Call it inside the transaction that made the change: the event and its deliveries are written in
    that same transaction (the change and its events are kept together or not at all, so no event can
    be lost between the commit and a later write), and each delivery is queued after the commit. A
    message that cannot be queued leaves its delivery pending, and the sweep queues it within minutes.
    `data` must be JSON-serialisable (UUIDs, datetimes and Decimals are fine); it is serialised now.
    """
    if event_type not in EVENT_TYPES:
        raise ValueError(
            f"{event_type!r} is not an outbound event type; add it to webhooks_app.event_types.EVENT_TYPES"
        )
    body = message_body(event_type, data).decode()
    webhook_event_record(owner_id=owner.pk, event_type=event_type, body=body)


def event_publish_for_owner(event_type: str, data: dict[str, Any], owner_id) -> None:
    """`event_publish` by the owner's id: the sink `payments.announcements.announce` calls (docs/payouts.md#events)."""
    if event_type not in EVENT_TYPES:
        raise ValueError(
            f"{event_type!r} is not an outbound event type; add it to webhooks_app.event_types.EVENT_TYPES"
        )
    webhook_event_record(owner_id=owner_id, event_type=event_type, body=message_body(event_type, data).decode())


@transaction.atomic
def webhook_event_record(*, owner_id, event_type: str, body: str) -> WebhookEvent | None:
    """One WebhookEvent and one delivery per matching active subscription, each queued after commit."""
    subscriptions = [
        s for s in WebhookSubscription.objects.filter(owner_id=owner_id, is_active=True) if event_type in s.events
    ]
    if not subscriptions:
        return None
    event = WebhookEvent.objects.create(owner_id=owner_id, type=event_type, body=body)
    now = timezone.now()
    deliveries = WebhookDelivery.objects.bulk_create(
        [
            WebhookDelivery(
                event=event,
                subscription=subscription,
                message_id=f"msg_{delivery_id.hex}",
                id=delivery_id,
                status=WebhookDeliveryStatus.PENDING,
                next_attempt_at=now,
            )
            for subscription, delivery_id in ((s, uuid.uuid4()) for s in subscriptions)
        ]
    )
    for delivery in deliveries:
        enqueue_after_commit(DELIVER_TASK, str(delivery.id))
    return event
