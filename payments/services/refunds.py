"""Refunds after release (docs/payouts.md#refunds-after-release): the seller's earning taken back, once,
from wherever its net is: still the seller's (pending, available), frozen by a chargeback, already taken
by a chargeback, or paid out (a debt); then the money their connected account holds unowed comes back."""

from __future__ import annotations

from django.db import transaction

from payments import ledger
from payments.models import ChargebackState, Earning, EarningStatus, LedgerEntry
from payments.providers import get_payment_provider
from payments.services.chargebacks import debt_recover_after_commit


def earning_transfer_reverse(*, earning: Earning) -> None:
    """No lock held, before the poster is refunded. Transfers are made per payout (docs/payouts.md#payouts),
    so an earning not paid out has no transfer of its own, and the money of one whose payout failed waits
    in the connected account, which the recovery after the refund takes back (`earning_reverse`). Only an
    earning transferred on its own before payouts made the transfers (its `transfer_id` set, no payout,
    not paid out) is reversed here: at most what the connected account holds by the ledger, key
    `earning-reversal:<earning>`, booked as moved (money: cash +V / connected -V)."""
    if (
        not earning.transfer_id
        or earning.payout_id
        or earning.status
        not in (
            EarningStatus.PENDING,
            EarningStatus.AVAILABLE,
        )
    ):
        return
    key = f"earning-reversal:{earning.pk}"
    if LedgerEntry.objects.filter(key=key).exists():  # reversed and booked before
        return
    amount = min(earning.amount, ledger.money_balance(ledger.connected(earning.owner_id), earning.currency))
    if amount <= 0:
        return
    made = get_payment_provider().reverse_transfer(transfer_id=earning.transfer_id, amount=amount, idempotency_key=key)
    with transaction.atomic():
        ledger.ledger_post(
            kind="transfer_reversed",
            source=earning.source,
            key=key,
            currency=earning.currency,
            lines=[(ledger.CASH, amount), (ledger.connected(earning.owner_id), -amount)],
            provider_ref=made.reversal_id or earning.transfer_id,
        )


def _taken_from(earning: Earning) -> str:
    """The seller's state the refund takes the net back from."""
    if earning.chargeback_state in (ChargebackState.DEBITED, ChargebackState.LOST):
        return "chargebacks"  # a chargeback took it already: the refund takes it over, the seller pays once
    if earning.status == EarningStatus.FROZEN:
        return "frozen"
    if earning.status in (EarningStatus.PENDING, EarningStatus.AVAILABLE):
        return earning.status
    return "available"  # paid out: a debt on the owner's available balance


def earning_reverse(*, source: str) -> Earning | None:
    """Inside the caller's transaction: the released money of `source` goes back to the platform's held
    money (to be refunded): the fee and the seller's net are taken back, from the state the net is in (an
    earning already paid out is debited from the owner's available balance, like a chargeback; one a
    chargeback took already is not taken twice). After commit, what the owner's connected account holds
    beyond what they are owed is recovered. Once."""
    earning = Earning.objects.select_for_update().filter(source=source).first()
    if earning is None or earning.reversed_amount:
        return earning
    ledger.ledger_post(
        kind="reversed",
        source=source,
        key=f"reversed:{source}",
        currency=earning.currency,
        lines=[
            (ledger.seller(earning.owner_id, _taken_from(earning)), earning.amount),
            (ledger.FEES, earning.fee),
            (ledger.HELD, -earning.gross),
        ],
    )
    earning.reversed_amount = earning.amount
    if earning.status != EarningStatus.PAID_OUT:
        earning.status = EarningStatus.REVERSED
    earning.save(update_fields=["reversed_amount", "status", "updated_at"])
    debt_recover_after_commit(owner_id=earning.owner_id, currency=earning.currency)
    return earning
