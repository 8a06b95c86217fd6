"""Handlers of the provider's events about card disputes (registered from PaymentsConfig.ready();
docs/payouts.md#chargebacks).

Stripe's shapes: every `charge.dispute.*` event carries the dispute, naming its `payment_intent`, with its
`status` (open: `warning_needs_response`, `warning_under_review` for an inquiry, `needs_response`,
`under_review` for a chargeback; closed: `won`, `warning_closed`, `prevented`, `lost`) and its
`balance_transactions` (what it took from the platform's balance and what came back).
"""

from __future__ import annotations

import logging

from payments.registry import ProviderEvent, payment_event_handler
from payments.services.chargebacks import CLOSED, chargeback_close, chargeback_open, dispute_funds_apply

logger = logging.getLogger(__name__)


def _str(value: object) -> str:
    return value if isinstance(value, str) else ""


def _dispute(event: ProviderEvent) -> tuple[str, str, str]:
    """(payment intent, dispute id, status) of the event's dispute; "" for what it does not name."""
    intent = event.object.get("payment_intent")
    intent = _str(intent.get("id") if isinstance(intent, dict) else intent)
    return intent, _str(event.object.get("id")), _str(event.object.get("status"))


def _book_funds(event: ProviderEvent, intent: str, dispute_id: str) -> None:
    """Every `charge.dispute.*` event carries the dispute's balance transactions so far: each is booked
    once, whichever event brings it first (the inbound intake skips an event older than one already
    applied to the same dispute, so a late `funds_withdrawn` may never be applied itself)."""
    txns = event.object.get("balance_transactions")
    if isinstance(txns, list) and txns:
        dispute_funds_apply(payment_ref=intent, dispute_id=dispute_id, balance_transactions=txns)


@payment_event_handler(
    "charge.dispute.created",
    "charge.dispute.updated",
    "charge.dispute.closed",
    "charge.dispute.funds_withdrawn",
    "charge.dispute.funds_reinstated",
)
def on_dispute(event: ProviderEvent) -> None:
    """Every dispute event carries the whole dispute, and the intake applies only the newest event of a
    dispute (one overtaken by a later event is skipped): so each applies all it says, whatever its type.
    Its balance transactions are booked; an open status opens the chargeback (an inquiry escalated to a
    chargeback stays open: the earning stays frozen or debited); a closed status closes it."""
    intent, dispute_id, status = _dispute(event)
    if not (intent and dispute_id):
        return
    _book_funds(event, intent, dispute_id)
    if status in CLOSED:
        chargeback_close(payment_ref=intent, dispute_id=dispute_id, status=status)
    elif event.type == "charge.dispute.closed":
        logger.warning("charge.dispute.closed %s with status %r: left open", dispute_id, status)
    elif status or event.type == "charge.dispute.created":
        chargeback_open(payment_ref=intent, dispute_id=dispute_id, status=status)
