"""Provider events about sellers' money (registered from PaymentsConfig.ready(); docs/payouts.md#events).

Stripe's shapes: `account.updated` carries a Connect account, `payout.*` a payout made on a connected
account (the event's top-level `account` names it), `transfer.reversed` a transfer (`amount_reversed`
in total, minor units), `capability.updated` a capability (`id`, `account`, `status`),
`account.application.deauthorized` an application (the event's `account` is the one that left).
Card disputes (`charge.dispute.*`) are payments/dispute_events.py's.
"""

from __future__ import annotations

from payments.money import from_minor
from payments.registry import ProviderEvent, payment_event_handler
from payments.services.accounts import capability_apply, payout_account_apply, payout_account_restrict
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
