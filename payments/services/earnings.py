"""Earnings (docs/payouts.md#release): a seller's net of one released payment, pending through the holding
period, then available; a payout moves it (docs/payouts.md#payouts)."""

from __future__ import annotations

from datetime import datetime, timedelta
from decimal import ROUND_HALF_UP, Decimal
from typing import Any

from django.conf import settings
from django.db import transaction
from django.utils import timezone

from payments import ledger
from payments.announcements import announce
from payments.fees import FeeSplit, fee_split, quantum
from payments.models import HOLD_REASONS, Chargeback, Earning, EarningStatus
from payments.services.chargebacks import chargeback_apply, chargeback_settle


def shown(amount: Decimal, currency: str) -> str:
    """Money in events as in the API: a string in the currency's minor-unit places."""
    return str(amount.quantize(quantum(currency)))


def earning_data(earning: Earning) -> dict[str, Any]:
    return {
        "earning_id": earning.id,
        "source": earning.source,
        "currency": earning.currency,
        "gross": shown(earning.gross, earning.currency),
        "fee": shown(earning.fee, earning.currency),
        "amount": shown(earning.amount, earning.currency),
        "status": earning.status,
    }


def hold_explained(earning: Earning) -> str:
    """The seller's sentence for the earning's `hold_reason` ("" when nothing holds it)."""
    return HOLD_REASONS.get(earning.hold_reason, "")


def hold_until(*, released_at: datetime) -> datetime:
    """When a released earning may be paid out (docs/payouts.md#the-holding-period): the holding period
    (EARNING_HOLD_DAYS) or the payment's settlement (PAYOUT_SETTLEMENT_DELAY_SECONDS), whichever is longer."""
    hold = max(timedelta(days=settings.EARNING_HOLD_DAYS), timedelta(seconds=settings.PAYOUT_SETTLEMENT_DELAY_SECONDS))
    return released_at + hold


def _split(*, gross: Decimal, currency: str, fee: Decimal | None) -> FeeSplit:
    """The fee as computed today, or the pinned one the poster saw at selection (never above the gross)."""
    if fee is None:
        return fee_split(amount=gross, currency=currency)
    step = quantum(currency)
    gross = gross.quantize(step, rounding=ROUND_HALF_UP)
    pinned = min(max(Decimal(fee), Decimal(0)), gross).quantize(step, rounding=ROUND_HALF_UP)
    return FeeSplit(amount=gross, fee=pinned, net=gross - pinned)


def earning_record(
    *,
    owner_id,
    source: str,
    payment_ref: str,
    provider: str,
    currency: str,
    gross: Decimal,
    now: datetime,
    fee: Decimal | None = None,
) -> Earning:
    """Inside the caller's transaction: the seller's net of `gross` becomes a pending earning, the fee
    the platform's (one ledger entry). `fee`, when given, is the fee pinned when the poster selected the
    bid (docs/payouts.md#the-fee); else it is computed from today's settings. Once per source: a second
    call returns the first earning. Nothing moves at the provider: the payout that pays it transfers it
    (docs/payouts.md#payouts)."""
    existing = Earning.objects.filter(source=source).first()
    if existing is not None:
        return existing
    split = _split(gross=gross, currency=currency, fee=fee)
    earning = Earning.objects.create(
        owner_id=owner_id,
        source=source,
        payment_ref=payment_ref,
        provider=provider,
        currency=currency,
        gross=split.amount,
        fee=split.fee,
        amount=split.net,
        available_after=hold_until(released_at=now),
    )
    ledger.ledger_post(
        kind="released",
        source=source,
        key=f"released:{source}",
        currency=currency,
        lines=[
            (ledger.HELD, split.amount),
            (ledger.FEES, -split.fee),
            (ledger.seller(owner_id, "pending"), -split.net),
        ],
        memo=f"fee {split.fee}, net {split.net}",
    )
    # A chargeback the provider announced before this release freezes the earning at once; one already
    # lost reverses it as its close would have (frozen, then to chargebacks): it is never paid out.
    # A won one changes nothing (docs/payouts.md#chargebacks).
    # Locked, so a close racing this release waits for it (and then finds the earning) or is seen by it.
    earlier = list(
        Chargeback.objects.select_for_update()
        .filter(payment_ref=payment_ref, status__in=(Chargeback.Status.OPEN, Chargeback.Status.LOST))
        .order_by("created_at")
    )
    if opened := next((c for c in earlier if c.status == Chargeback.Status.OPEN), None):
        chargeback_apply(earning, opened.id)
    elif earlier:
        chargeback_apply(earning, earlier[0].id)
        chargeback_settle(earning, earlier[0].id, won=False)
    return earning


def earnings_settle(*, now: datetime | None = None, batch: int | None = None) -> int:
    """Beat: pending earnings whose holding period is over become available (`earning.available`), every
    one due, in batches by id (keyset), each earning in its own short transaction."""
    now = now or timezone.now()
    size = batch or settings.PAYOUT_BATCH_SIZE
    moved, after = 0, None
    while True:
        due = Earning.objects.filter(status=EarningStatus.PENDING, available_after__lte=now).order_by("pk")
        ids = list((due.filter(pk__gt=after) if after else due).values_list("pk", flat=True)[:size])
        if not ids:
            return moved
        after = ids[-1]
        moved += sum(_settle_one(earning_id, now) for earning_id in ids)


def _settle_one(earning_id, now: datetime) -> bool:
    with transaction.atomic():
        earning = Earning.objects.select_for_update().filter(pk=earning_id, status=EarningStatus.PENDING).first()
        if earning is None:
            return False
        earning.status, earning.available_at = EarningStatus.AVAILABLE, now
        earning.save(update_fields=["status", "available_at", "updated_at"])
        ledger.ledger_post(
            kind="available",
            source=earning.source,
            key=f"available:{earning.pk}",
            currency=earning.currency,
            lines=[
                (ledger.seller(earning.owner_id, "pending"), earning.amount),
                (ledger.seller(earning.owner_id, "available"), -earning.amount),
            ],
        )
        announce("earning.available", earning_data(earning), earning.owner_id)
    return True
