"""The counts webhooks_app keeps (core.db.counters; docs/decisions.md#lists).

`deliveries.subscription.<subscription>.<status>` counts each subscription's deliveries of each status, for
the `total` of its deliveries list with a `status` filter (that key) and without one (the sum over the
statuses): a grouped count kept by the triggers of migration 0006 (0005 counted every status in one key).
A delivery deleted (its subscription deleted, the delete cascading) leaves its count."""

from __future__ import annotations

from core.db import counters
from webhooks_app.models import WebhookDelivery, WebhookDeliveryStatus

SUBSCRIPTION_DELIVERIES = "deliveries.subscription"


def subscription_deliveries(subscription_id, status: str | None = None) -> list[str]:
    """The kept counts whose sum is the count of a subscription's deliveries (of `status`)."""
    statuses = [status] if status else WebhookDeliveryStatus.values
    return [counters.key_name(SUBSCRIPTION_DELIVERIES, subscription_id, each) for each in statuses]


counters.register_grouped(
    SUBSCRIPTION_DELIVERIES, lambda: WebhookDelivery.objects.all(), by=("subscription_id", "status")
)
