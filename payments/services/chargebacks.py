"""Card chargebacks (docs/payouts.md#chargebacks): the seller's earning of a disputed charge is frozen, or
debited when it was paid out, and given back or reversed when the chargeback closes; the money the
dispute takes from the platform's balance (and gives back) is booked as the provider moved it."""

from __future__ import annotations

import logging
from decimal import Decimal
from typing import Any

from django.db import transaction

from core.http.errors import ProviderError
from core.ops.enqueue import enqueue_after_commit
from payments import ledger
from payments.models import Chargeback, ChargebackState, Earning, EarningStatus, LedgerEntry
from payments.money import from_minor, normalise_currency

logger = logging.getLogger(__name__)

# Claims of a dispute's money (docs/payouts.md#chargebacks): what disputes took from the platform's balance
# (amount and dispute fee, less what came back) is the platform's loss (debit), and gone to the card network
# and the provider (credit). What a seller's chargeback covers is the platform's, taken from the seller
# (seller:<id>:chargebacks), so the platform's own loss is platform:losses - the sellers' chargebacks.

# Stripe's dispute statuses: an open one (an inquiry, `warning_*`, or a chargeback), or how it closed.
NOT_LOST = frozenset({"won", "warning_closed", "prevented"})
CLOSED = NOT_LOST | {"lost"}


def _move(earning: Earning, kind: str, key: str, debit: str, credit: str, amount: Decimal) -> None:
    ledger.ledger_post(
        kind=kind,
        source=earning.source,
        key=key,
        currency=earning.currency,
        lines=[(ledger.seller(earning.owner_id, debit), amount), (ledger.seller(earning.owner_id, credit), -amount)],
    )


def debt_recover_after_commit(*, owner_id, currency: str) -> None:
    """The owner's net was taken back (a chargeback's debit, a refund after release): once the caller's
    transaction commits, the money their connected account holds beyond what they are owed is taken back
    (`payments.tasks.recover_debt`: a transfer reversal, a provider call made with no lock held;
    docs/payouts.md#recovery). Otherwise the debt is netted from the next payout's transfer."""
    enqueue_after_commit("payments.tasks.recover_debt", str(owner_id), currency)


def _chargeback(payment_ref: str, dispute_id: str) -> Chargeback:
    """The dispute's row, created when this is the first we hear of it, and locked."""
    Chargeback.objects.get_or_create(id=dispute_id, defaults={"payment_ref": payment_ref})
    return Chargeback.objects.select_for_update().get(id=dispute_id)


@transaction.atomic
def chargeback_open(*, payment_ref: str, dispute_id: str, status: str = "") -> Earning | None:
    """`charge.dispute.created` / `.updated` while open: the card's owner disputes the charge (an inquiry
    or a chargeback). The seller's unpaid earning of it is frozen; one already paid out is debited from
    the owner's available balance (a debt, recovered in money: docs/payouts.md#chargebacks). Staff are
    told (ERROR in the log; the earning shows in the admin). A dispute already closed opens nothing."""
    chargeback = _chargeback(payment_ref, dispute_id)
    if status and chargeback.status == Chargeback.Status.OPEN and chargeback.provider_status != status:
        chargeback.provider_status = status[:40]
        chargeback.save(update_fields=["provider_status", "updated_at"])
    earning = Earning.objects.select_for_update().filter(payment_ref=payment_ref).first()
    if earning is None:  # remembered: the release freezes the earning it makes (earning_record)
        logger.error("chargeback %s on payment %s: nothing released yet; needs attention", dispute_id, payment_ref)
        return None
    if chargeback.status != Chargeback.Status.OPEN:  # a late or re-sent `created`: the close decided
        return earning
    return chargeback_apply(earning, dispute_id)


def chargeback_apply(earning: Earning, dispute_id: str) -> Earning:
    """Freeze the (locked or just created) earning, or debit it when it was paid out; once. An earning
    already refunded (reversed) is not the seller's any more: the chargeback takes nothing from them
    again (the platform's balance pays it; docs/payouts.md#chargebacks)."""
    if earning.chargeback_state in (ChargebackState.FROZEN, ChargebackState.DEBITED):
        return earning
    if earning.chargeback_id == dispute_id and earning.chargeback_state:  # applied and closed already
        return earning
    payment_ref = earning.payment_ref
    key = f"chargeback:{dispute_id}"
    if earning.reversed_amount or earning.status == EarningStatus.REVERSED:
        earning.chargeback_id = dispute_id
        earning.save(update_fields=["chargeback_id", "updated_at"])
        logger.error(
            "chargeback %s on payment %s: earning %s was refunded already, the seller is not debited again; "
            "needs attention",
            dispute_id,
            payment_ref,
            earning.pk,
        )
        return earning
    if earning.status in (EarningStatus.PENDING, EarningStatus.AVAILABLE):
        _move(earning, "chargeback_frozen", key, earning.status, "frozen", earning.amount)
        earning.frozen_from, earning.status = earning.status, EarningStatus.FROZEN
        earning.chargeback_state = ChargebackState.FROZEN
    else:
        _move(earning, "chargeback_debited", key, "available", "chargebacks", earning.amount)
        earning.chargeback_state = ChargebackState.DEBITED
        debt_recover_after_commit(owner_id=earning.owner_id, currency=earning.currency)
    earning.chargeback_id = dispute_id
    earning.save(update_fields=["status", "frozen_from", "chargeback_state", "chargeback_id", "updated_at"])
    logger.error(
        "chargeback %s on payment %s: earning %s of %s %s %s; needs attention",
        dispute_id,
        payment_ref,
        earning.pk,
        earning.amount,
        earning.currency,
        earning.chargeback_state,
    )
    return earning


@transaction.atomic
def chargeback_close(*, payment_ref: str, dispute_id: str, won: bool | None = None, status: str = "") -> Earning | None:
    """`charge.dispute.closed` (or `.updated` to a closed status): `status` is Stripe's (`won`,
    `warning_closed`, `prevented`: not lost; `lost`); `won` is the older form of the same answer. Not
    lost gives the earning back (unfrozen, or credited back); lost keeps the debit, and a frozen earning
    is reversed. The first close decides: a dispute closes once."""
    lost = status == "lost" if status else not won
    chargeback = _chargeback(payment_ref, dispute_id)
    if chargeback.status == Chargeback.Status.OPEN:
        chargeback.status = Chargeback.Status.LOST if lost else Chargeback.Status.WON
        chargeback.provider_status = (status or ("lost" if lost else "won"))[:40]
        chargeback.save(update_fields=["status", "provider_status", "updated_at"])
    elif (chargeback.status == Chargeback.Status.LOST) != lost:
        logger.warning("chargeback %s closed %s already; %r ignored", dispute_id, chargeback.status, status or won)
    earning = Earning.objects.select_for_update().filter(payment_ref=payment_ref).first()
    if earning is None:
        return None
    if chargeback.status == Chargeback.Status.LOST and not earning.chargeback_state:
        # Lost, and its opening never applied (an event overtaken by a later one of the same dispute is not
        # applied by the intake): the loss is charged now, as the release charges an earlier lost one.
        earning = chargeback_apply(earning, dispute_id)
    if earning.chargeback_state not in (ChargebackState.FROZEN, ChargebackState.DEBITED):
        return earning
    return chargeback_settle(earning, dispute_id, won=chargeback.status == Chargeback.Status.WON)


def chargeback_settle(earning: Earning, dispute_id: str, *, won: bool) -> Earning:
    """The (locked, frozen or debited) earning's chargeback closed: given back, or reversed; once. An
    earning refunded while its chargeback was open was taken back by the refund, from the frozen or
    charged-back money: nothing is given back to the seller, nothing taken twice."""
    payment_ref = earning.payment_ref
    key = f"chargeback-closed:{dispute_id}"
    if earning.reversed_amount:  # refunded meanwhile: the refund took the net from where the chargeback held it
        logger.info("chargeback %s closed on earning %s, refunded already: nothing moves", dispute_id, earning.pk)
    elif earning.chargeback_state == ChargebackState.FROZEN:
        if won:
            _move(earning, "chargeback_won", key, "frozen", earning.frozen_from, earning.amount)
            earning.status = earning.frozen_from
        else:
            _move(earning, "chargeback_lost", key, "frozen", "chargebacks", earning.amount)
            earning.status = EarningStatus.REVERSED
    elif won:
        _move(earning, "chargeback_won", key, "chargebacks", "available", earning.amount)
    earning.chargeback_state = ChargebackState.WON if won else ChargebackState.LOST
    earning.save(update_fields=["status", "chargeback_state", "updated_at"])
    logger.warning("chargeback %s on payment %s closed: %s", dispute_id, payment_ref, earning.chargeback_state)
    return earning


def _minor(value: Any) -> int | None:
    return value if isinstance(value, int) and not isinstance(value, bool) else None


@transaction.atomic
def dispute_funds_apply(*, payment_ref: str, dispute_id: str, balance_transactions: list[Any]) -> int:
    """`charge.dispute.funds_withdrawn` / `.funds_reinstated`: each of the dispute's balance transactions
    (Stripe: `net` = `amount` - `fee`, minor units, negative when taken) is booked once, by its id: taken,
    the money group outside +(amount + fee) / cash -(amount + fee), the claims platform:losses /
    platform:disputed; given back, the reverse of what came back. Returns how many were booked now."""
    _chargeback(payment_ref, dispute_id)
    booked = 0
    for txn in balance_transactions:
        if not isinstance(txn, dict) or not isinstance(txn.get("id"), str) or _minor(txn.get("net")) in (None, 0):
            continue
        try:
            currency = normalise_currency(str(txn.get("currency", "")))
        except ProviderError:
            continue
        net = from_minor(abs(txn["net"]), currency)
        taken = txn["net"] < 0
        sign = 1 if taken else -1
        key = f"dispute-funds:{txn['id']}"
        if LedgerEntry.objects.filter(key=key).exists():  # a re-sent event, or the other of the two
            continue
        ledger.ledger_post(
            kind="dispute_withdrawn" if taken else "dispute_reinstated",
            source=f"dispute:{dispute_id}",
            key=key,
            currency=currency,
            lines=[
                (ledger.OUTSIDE, sign * net),
                (ledger.CASH, -sign * net),
                (ledger.LOSSES, sign * net),
                (ledger.DISPUTED, -sign * net),
            ],
            memo=f"{payment_ref}: amount {txn.get('amount')}, fee {txn.get('fee')} ({currency}, minor units)",
            provider_ref=dispute_id,
        )
        booked += 1
    return booked
