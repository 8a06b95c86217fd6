"""Refunds after release (docs/payouts.md#refunds-after-release): the seller's earning taken back."""

from __future__ import annotations

from payments import ledger
from payments.models import Earning, EarningStatus
from payments.providers import get_payment_provider


def earning_transfer_reverse(*, earning: Earning) -> None:
    """No lock held: take the earning's transfer back from the seller's account (Stripe: a transfer
    reversal), keyed by the earning, before the poster is refunded. Nothing to do without a transfer."""
    if earning.transfer_id and earning.status in (EarningStatus.PENDING, EarningStatus.AVAILABLE):
        get_payment_provider().reverse_transfer(
            transfer_id=earning.transfer_id, amount=earning.amount, idempotency_key=f"earning-reversal:{earning.pk}"
        )


def earning_reverse(*, source: str) -> Earning | None:
    """Inside the caller's transaction: the released money of `source` goes back to the platform's held
    money (to be refunded): the fee and the seller's net are taken back, from the state the net is in (an
    earning already paid out is debited from the owner's available balance, like a chargeback). Once."""
    earning = Earning.objects.select_for_update().filter(source=source).first()
    if earning is None or earning.reversed_amount:
        return earning
    state = earning.status if earning.status in (EarningStatus.PENDING, EarningStatus.AVAILABLE) else "available"
    if earning.status == EarningStatus.FROZEN:
        state = "frozen"
    ledger.ledger_post(
        kind="reversed",
        source=source,
        key=f"reversed:{source}",
        currency=earning.currency,
        lines=[
            (ledger.seller(earning.owner_id, state), earning.amount),
            (ledger.FEES, earning.fee),
            (ledger.HELD, -earning.gross),
        ],
    )
    earning.reversed_amount = earning.amount
    if earning.status != EarningStatus.PAID_OUT:
        earning.status = EarningStatus.REVERSED
    earning.save(update_fields=["reversed_amount", "status", "updated_at"])
    return earning
