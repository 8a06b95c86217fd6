"""Handlers of the payment provider's events about team subscriptions
(docs/decisions.md#payments-webhook-inbound).

With Stripe Checkout a hired team first knows only its checkout session (`cs_...`); the
subscription's `sub_...` id is linked from `checkout.session.completed` (`subscription`) or from
the first `customer.subscription.*` event (its metadata `team_id`), whichever comes first.
"""

from __future__ import annotations

from payments.registry import ProviderEvent, payment_event_handler
from teams import services


def _period_end(obj: dict):
    # Stripe API versions from 2025-03 keep the period on the subscription's items.
    if obj.get("current_period_end") is not None:
        return obj["current_period_end"]
    items = (obj.get("items") or {}).get("data") or [{}]
    return items[0].get("current_period_end")


def _metadata(obj: dict) -> dict:
    metadata = obj.get("metadata")
    return metadata if isinstance(metadata, dict) else {}


def _id(value) -> str:
    if isinstance(value, dict):  # an expanded object
        value = value.get("id")
    return value if isinstance(value, str) else ""


SUBSCRIPTION_EVENTS = (
    "customer.subscription.created",
    "customer.subscription.updated",
    "customer.subscription.deleted",
)


@payment_event_handler(*SUBSCRIPTION_EVENTS)
def on_subscription_changed(event: ProviderEvent) -> None:
    obj = event.object
    subscription_id = _id(obj.get("id"))
    services.team_link_subscription(subscription_id=subscription_id, team_id=_metadata(obj).get("team_id"))
    status = "canceled" if event.type == "customer.subscription.deleted" else obj.get("status", "")
    services.team_apply_subscription_event(
        subscription_id=subscription_id,
        event_created=event.created,
        status=status,
        cancel_at_period_end=bool(obj.get("cancel_at_period_end")),
        period_end=_period_end(obj),
    )


@payment_event_handler("invoice.paid", "invoice.payment_failed")
def on_invoice(event: ProviderEvent) -> None:
    services.team_apply_invoice_event(
        subscription_id=event.object.get("subscription") or "",
        event_created=event.created,
        paid=event.type == "invoice.paid",
    )


@payment_event_handler("checkout.session.completed")
def on_checkout_completed(event: ProviderEvent) -> None:
    obj = event.object
    subscription_id = _id(obj.get("subscription"))
    if session_id := _id(obj.get("id")):
        services.team_link_subscription(subscription_id=subscription_id, session_id=session_id)
    services.team_apply_checkout_completed(subscription_id=subscription_id, event_created=event.created)
