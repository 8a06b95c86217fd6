"""Card chargebacks (docs/payouts.md#chargebacks): the seller's earning of a disputed charge is frozen, or
debited when it was paid out, and given back or reversed when the chargeback closes."""

from __future__ import annotations

import logging
from decimal import Decimal

from django.db import transaction

from payments import ledger
from payments.models import Chargeback, ChargebackState, Earning, EarningStatus

logger = logging.getLogger(__name__)


def _move(earning: Earning, kind: str, key: str, debit: str, credit: str, amount: Decimal) -> None:
    ledger.ledger_post(
        kind=kind,
        source=earning.source,
        key=key,
        currency=earning.currency,
        lines=[(ledger.seller(earning.owner_id, debit), amount), (ledger.seller(earning.owner_id, credit), -amount)],
    )


@transaction.atomic
def chargeback_open(*, payment_ref: str, dispute_id: str) -> Earning | None:
    """`charge.dispute.created`: the card's owner disputes the charge. The seller's unpaid earning of it
    is frozen; one already paid out is debited from the owner's available balance (a negative balance is
    paid back from later earnings). Staff are told (ERROR in the log; the earning shows in the admin)."""
    Chargeback.objects.get_or_create(id=dispute_id, defaults={"payment_ref": payment_ref})
    earning = Earning.objects.select_for_update().filter(payment_ref=payment_ref).first()
    if earning is None:  # remembered: the release freezes the earning it makes (earning_record)
        logger.error("chargeback %s on payment %s: nothing released yet; needs attention", dispute_id, payment_ref)
        return None
    return chargeback_apply(earning, dispute_id)


def chargeback_apply(earning: Earning, dispute_id: str) -> Earning:
    """Freeze the (locked or just created) earning, or debit it when it was paid out; once."""
    if earning.chargeback_state in (ChargebackState.FROZEN, ChargebackState.DEBITED):
        return earning
    payment_ref = earning.payment_ref
    key = f"chargeback:{dispute_id}"
    if earning.status in (EarningStatus.PENDING, EarningStatus.AVAILABLE):
        _move(earning, "chargeback_frozen", key, earning.status, "frozen", earning.amount)
        earning.frozen_from, earning.status = earning.status, EarningStatus.FROZEN
        earning.chargeback_state = ChargebackState.FROZEN
    else:
        _move(earning, "chargeback_debited", key, "available", "chargebacks", earning.amount)
        earning.chargeback_state = ChargebackState.DEBITED
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
def chargeback_close(*, payment_ref: str, dispute_id: str, won: bool) -> Earning | None:
    """`charge.dispute.closed`: won gives the earning back (unfrozen, or credited back); lost keeps the
    debit, and a frozen earning is reversed."""
    status = Chargeback.Status.WON if won else Chargeback.Status.LOST
    Chargeback.objects.update_or_create(id=dispute_id, defaults={"payment_ref": payment_ref, "status": status})
    earning = Earning.objects.select_for_update().filter(payment_ref=payment_ref).first()
    if earning is None or earning.chargeback_state not in (ChargebackState.FROZEN, ChargebackState.DEBITED):
        return earning
    return chargeback_settle(earning, dispute_id, won=won)


def chargeback_settle(earning: Earning, dispute_id: str, *, won: bool) -> Earning:
    """The (locked, frozen or debited) earning's chargeback closed: given back, or reversed; once."""
    payment_ref = earning.payment_ref
    key = f"chargeback-closed:{dispute_id}"
    if earning.chargeback_state == ChargebackState.FROZEN:
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
