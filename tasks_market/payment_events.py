"""Payment-provider events this app follows (registered from TasksMarketConfig.ready()).

The money is secured by `payment_intent.succeeded` (the local provider; Stripe for an intent
captured at once) or `payment_intent.amount_capturable_updated` (Stripe, manual capture: the
customer paid and the money waits for approval). With Stripe Checkout our payment first knows only
its session (`cs_...`); the intent is linked from `checkout.session.completed` or from the first
`payment_intent.*` event, whichever arrives first (services.payments.payment_link_intent). A session
that expires unpaid (`checkout.session.expired`) is a failed payment: the task opens again. A refund
the provider reports (`charge.refunded`: ours, or one made in its dashboard) is booked for what our records
do not hold yet (services.provider_refunds).
"""

from __future__ import annotations

from payments.registry import EventRejected, ProviderEvent, payment_event_handler
from tasks_market.services.payments import (
    PaymentMismatch,
    payment_apply_canceled,
    payment_apply_failed,
    payment_apply_succeeded,
    payment_link_intent,
)
from tasks_market.services.provider_refunds import RefundMismatch, payment_apply_refunded

# The event's minor-unit amounts that must equal the payment's, by event type.
_AMOUNT_FIELDS = {
    "payment_intent.succeeded": ("amount", "amount_received"),
    "payment_intent.amount_capturable_updated": ("amount", "amount_capturable"),
}


def _payment_id(event: ProviderEvent) -> str:
    value = event.object.get("id")
    if not isinstance(value, str):
        return ""
    payment_link_intent(payment_intent_id=value, metadata=event.object.get("metadata"))
    return value


@payment_event_handler("payment_intent.succeeded", "payment_intent.amount_capturable_updated")
def on_payment_succeeded(event: ProviderEvent) -> None:
    if not (payment_id := _payment_id(event)):
        return
    fields = _AMOUNT_FIELDS[event.type]
    amounts = {field: event.object.get(field) for field in fields if field in event.object}
    try:
        payment_apply_succeeded(
            provider_payment_id=payment_id,
            event_id=event.id,
            amounts=amounts or {"amount": None},
            currency=event.object.get("currency"),
            # Only `payment_intent.succeeded` is captured money; `amount_capturable_updated` is held.
            captured=event.type == "payment_intent.succeeded",
        )
    except PaymentMismatch as exc:  # recorded on the payment; the webhook marks the event rejected
        raise EventRejected(str(exc)) from exc


@payment_event_handler("payment_intent.payment_failed")
def on_payment_failed(event: ProviderEvent) -> None:
    if payment_id := _payment_id(event):
        payment_apply_failed(provider_payment_id=payment_id)


@payment_event_handler("payment_intent.canceled")
def on_payment_canceled(event: ProviderEvent) -> None:
    """The provider cancelled an intent: a held payment whose authorisation expired (docs/payouts.md)."""
    if payment_id := _payment_id(event):
        payment_apply_canceled(provider_payment_id=payment_id)


@payment_event_handler("checkout.session.expired")
def on_checkout_expired(event: ProviderEvent) -> None:
    """Nobody paid before the checkout page expired (Stripe: 24 h by default). Our payment still knows
    only the session (no intent was made), and only one still waiting for the customer moves."""
    session_id = event.object.get("id")
    if event.object.get("mode", "payment") == "payment" and isinstance(session_id, str) and session_id:
        payment_apply_failed(provider_payment_id=session_id)


@payment_event_handler("checkout.session.completed")
def on_checkout_completed(event: ProviderEvent) -> None:
    obj = event.object
    session_id, intent_id = obj.get("id"), obj.get("payment_intent")
    if isinstance(intent_id, dict):
        intent_id = intent_id.get("id")
    if obj.get("mode", "payment") == "payment" and isinstance(session_id, str) and isinstance(intent_id, str):
        payment_link_intent(payment_intent_id=intent_id, session_id=session_id)


@payment_event_handler("charge.refunded")
def on_charge_refunded(event: ProviderEvent) -> None:
    """A charge refunded at the provider, in part or in full (docs/decisions.md#refunds-made-at-the-provider):
    `amount_refunded` is the provider's running total for the charge's payment intent."""
    obj = event.object
    intent = obj.get("payment_intent")
    if isinstance(intent, dict):
        intent = intent.get("id")
    refunded, currency = obj.get("amount_refunded"), obj.get("currency")
    if not isinstance(intent, str) or not intent or not isinstance(currency, str):
        return
    if not isinstance(refunded, int) or isinstance(refunded, bool) or refunded < 0:
        raise EventRejected(f"amount_refunded {refunded!r} is not a count of minor units.")
    # Stripe's charge lists its refunds only on older API versions; without them the entry names the payment,
    # and the reconciliation matches the provider's refund by it (docs/payouts.md#reconciliation).
    refunds = obj.get("refunds") if isinstance(obj.get("refunds"), dict) else {}
    refund_ids = [r.get("id") for r in refunds.get("data") or [] if isinstance(r, dict)]
    try:
        payment_apply_refunded(
            provider_payment_id=intent,
            amount_refunded_minor=refunded,
            currency=currency,
            provider_ref=next((r for r in reversed(refund_ids) if isinstance(r, str)), "") or intent,
        )
    except RefundMismatch as exc:
        raise EventRejected(str(exc)) from exc
