"""Provider events about sellers' money (registered from PaymentsConfig.ready(); docs/payouts.md#events).

Stripe's shapes: `account.updated` carries a Connect account, `payout.*` a payout made on a connected
account (the event's top-level `account` names it), `charge.dispute.*` a dispute naming its
`payment_intent`.
"""

from __future__ import annotations

from payments.registry import ProviderEvent, payment_event_handler
from payments.services.accounts import payout_account_apply
from payments.services.chargebacks import chargeback_close, chargeback_open
from payments.services.payouts import payout_settle


def _str(value: object) -> str:
    return value if isinstance(value, str) else ""


@payment_event_handler("account.updated")
def on_account_updated(event: ProviderEvent) -> None:
    if account_id := _str(event.object.get("id")):
        payout_account_apply(provider_account_id=account_id, obj=event.object)


@payment_event_handler("payout.paid", "payout.failed")
def on_payout(event: ProviderEvent) -> None:
    if payout_id := _str(event.object.get("id")):
        paid = event.type == "payout.paid"
        reason = _str(event.object.get("failure_message")) or _str(event.object.get("failure_code"))
        metadata = event.object.get("metadata") if isinstance(event.object.get("metadata"), dict) else {}
        ours = _str(metadata.get("payout_id"))  # set by payout_send: the event may overtake the create's answer
        # Refused when the event's connected account is not the payout's (payout_settle).
        payout_settle(provider_payout_id=payout_id, paid=paid, reason=reason, payout_id=ours, account=event.account)


def _intent(obj: dict) -> str:
    intent = obj.get("payment_intent")
    return _str(intent.get("id") if isinstance(intent, dict) else intent)


@payment_event_handler("charge.dispute.created")
def on_chargeback_created(event: ProviderEvent) -> None:
    if (intent := _intent(event.object)) and (dispute_id := _str(event.object.get("id"))):
        chargeback_open(payment_ref=intent, dispute_id=dispute_id)


@payment_event_handler("charge.dispute.closed")
def on_chargeback_closed(event: ProviderEvent) -> None:
    if (intent := _intent(event.object)) and (dispute_id := _str(event.object.get("id"))):
        won = event.object.get("status") in ("won", "warning_closed")
        chargeback_close(payment_ref=intent, dispute_id=dispute_id, won=won)
