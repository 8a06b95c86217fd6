"""Handlers of the provider's events about money (registered from PaymentsConfig.ready(); docs/payouts.md#events).

What buyers pay (payments.services.payments, which tells the payment's source through payments.registry):
the money is secured by `payment_intent.succeeded` (the local provider; Stripe for an intent captured at
once) or `payment_intent.amount_capturable_updated` (Stripe, manual capture: the payer paid and the money
waits for approval). With Stripe Checkout our payment first knows only its session (`cs_...`); the intent
is linked from `checkout.session.completed` or from the first `payment_intent.*` event, whichever arrives
first. A session that expires unpaid (`checkout.session.expired`) is a failed payment. A refund the
provider reports (`charge.refunded`: ours, or one made in its dashboard) is booked for what our records do
not hold yet.

Sellers' money, in Stripe's shapes: `account.updated` carries a Connect account, `payout.*` a payout made on a connected
account (the event's top-level `account` names it), `transfer.reversed` a transfer (`amount_reversed`
in total, minor units), `capability.updated` a capability (`id`, `account`, `status`),
`account.application.deauthorized` an application (the event's `account` is the one that left).
Card disputes (`charge.dispute.*`) are payments/dispute_handlers.py's.
"""

from __future__ import annotations

from payments.money import from_minor
from payments.registry import EventRejected, ProviderEvent, payment_event_handler
from payments.services.accounts import capability_apply, payout_account_apply, payout_account_restrict
from payments.services.payments import (
    PaymentMismatch,
    RefundMismatch,
    payment_apply_canceled,
    payment_apply_failed,
    payment_apply_refunded,
    payment_apply_succeeded,
    payment_link_intent,
)
from payments.services.payouts import payout_settle, transfer_reversed


def _str(value: object) -> str:
    return value if isinstance(value, str) else ""


@payment_event_handler("account.updated")
def on_account_updated(event: ProviderEvent) -> None:
    if account_id := _str(event.object.get("id")):
        payout_account_apply(provider_account_id=account_id, obj=event.object)


@payment_event_handler("payout.paid", "payout.failed", "payout.canceled")
def on_payout(event: ProviderEvent) -> None:
    """Paid, failed (also after paid) or canceled (docs/payouts.md#payout-states)."""
    if payout_id := _str(event.object.get("id")):
        paid = event.type == "payout.paid"
        reason = _str(event.object.get("failure_message")) or _str(event.object.get("failure_code"))
        metadata = event.object.get("metadata") if isinstance(event.object.get("metadata"), dict) else {}
        ours = _str(metadata.get("payout_id"))  # set by payout_send: the event may overtake the create's answer
        # Refused when the event's connected account is not the payout's (payout_settle).
        payout_settle(
            provider_payout_id=payout_id,
            paid=paid,
            reason=reason,
            payout_id=ours,
            account=event.account,
            canceled=event.type == "payout.canceled",
        )


@payment_event_handler("transfer.reversed")
def on_transfer_reversed(event: ProviderEvent) -> None:
    """A reversal of one of our transfers; one made elsewhere is booked (docs/payouts.md#recovery)."""
    transfer_id, currency = _str(event.object.get("id")), _str(event.object.get("currency"))
    minor = event.object.get("amount_reversed")
    if transfer_id and currency and isinstance(minor, int) and not isinstance(minor, bool) and minor > 0:
        transfer_reversed(
            transfer_id=transfer_id, amount_reversed=from_minor(minor, currency), currency=currency.lower()
        )


@payment_event_handler("capability.updated")
def on_capability_updated(event: ProviderEvent) -> None:
    """A payout capability that is not active restricts the account (docs/payouts.md#payout-accounts)."""
    account_id = _str(event.object.get("account")) or event.account
    if account_id and (capability := _str(event.object.get("id"))):
        capability_apply(provider_account_id=account_id, capability=capability, status=_str(event.object.get("status")))


@payment_event_handler("account.application.deauthorized")
def on_deauthorized(event: ProviderEvent) -> None:
    """The owner disconnected their account from our platform: no more payouts to it."""
    if event.account:
        payout_account_restrict(provider_account_id=event.account, reason="deauthorized")


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
