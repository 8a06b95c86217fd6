"""The counts webhooks_app keeps (core.db.counters; docs/decisions.md#lists).

`deliveries.subscription.<subscription>` counts each subscription's deliveries, every status, for the `total`
of its deliveries list without a `status` filter: a grouped count kept by the triggers of migration 0005.
A delivery deleted (its subscription deleted, the delete cascading) leaves its count."""

from __future__ import annotations

from core.db import counters
from webhooks_app.models import WebhookDelivery

SUBSCRIPTION_DELIVERIES = "deliveries.subscription"


def subscription_deliveries(subscription_id) -> str:
    return counters.key_name(SUBSCRIPTION_DELIVERIES, subscription_id)


counters.register_grouped(SUBSCRIPTION_DELIVERIES, lambda: WebhookDelivery.objects.all(), by=("subscription_id",))
