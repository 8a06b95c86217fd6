"""Earnings (docs/payouts.md#release): a seller's net of one released payment, pending until it settles,
then available."""

from __future__ import annotations

from datetime import datetime, timedelta
from decimal import Decimal
from typing import Any
from uuid import UUID

from django.conf import settings
from django.db import transaction
from django.utils import timezone

from core.enqueue import enqueue_after_commit
from payments import ledger
from payments.announce import announce
from payments.fees import fee_split, quantum
from payments.models import Chargeback, Earning, EarningStatus, PayoutAccount
from payments.providers import get_payment_provider
from payments.services.accounts import payable
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


def earning_record(
    *, owner_id, source: str, payment_ref: str, provider: str, currency: str, gross: Decimal, now: datetime
) -> Earning:
    """Inside the caller's transaction: the seller's net of `gross` becomes a pending earning, the fee
    the platform's (one ledger entry). Once per source: a second call returns the first earning."""
    existing = Earning.objects.filter(source=source).first()
    if existing is not None:
        return existing
    split = fee_split(amount=gross, currency=currency)
    earning = Earning.objects.create(
        owner_id=owner_id,
        source=source,
        payment_ref=payment_ref,
        provider=provider,
        currency=currency,
        gross=split.amount,
        fee=split.fee,
        amount=split.net,
        available_after=now + timedelta(seconds=settings.PAYOUT_SETTLEMENT_DELAY_SECONDS),
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
    if earning.status in (EarningStatus.PENDING, EarningStatus.AVAILABLE):
        # The transfer is a provider call: after commit, outside any lock (the payout run retries it).
        enqueue_after_commit("payments.tasks.transfer_earning", str(earning.id))
    return earning


def earning_transfer(*, earning_id: UUID | str) -> Earning | None:
    """Move the earning's net to the owner's payout account (Stripe: a transfer with `source_transaction`,
    so it can run before the charge settles). Waits, doing nothing, while the owner has no active
    account; safe to run twice (the key is the earning's)."""
    earning = Earning.objects.filter(pk=earning_id, transfer_id="").first()
    if earning is None or earning.status not in (EarningStatus.PENDING, EarningStatus.AVAILABLE):
        return earning
    account = PayoutAccount.objects.filter(owner_id=earning.owner_id).first()
    if not payable(account):
        return earning
    transfer = get_payment_provider().create_transfer(
        account_id=account.provider_account_id,
        amount=earning.amount,
        currency=earning.currency,
        transfer_group=earning.source,
        source_payment_id=earning.payment_ref,
        metadata={"earning_id": str(earning.id), "source": earning.source},
        idempotency_key=f"earning-transfer:{earning.id}",
    )
    Earning.objects.filter(pk=earning.pk, transfer_id="").update(transfer_id=transfer.id, updated_at=timezone.now())
    earning.refresh_from_db()
    return earning


def earnings_settle(*, now: datetime | None = None, limit: int = 500) -> int:
    """Beat: pending earnings whose payment has settled become available (`earning.available`)."""
    now = now or timezone.now()
    due = list(
        Earning.objects.filter(status=EarningStatus.PENDING, available_after__lte=now).values_list("pk", flat=True)[
            :limit
        ]
    )
    moved = 0
    for earning_id in due:
        with transaction.atomic():
            earning = Earning.objects.select_for_update().filter(pk=earning_id, status=EarningStatus.PENDING).first()
            if earning is None:
                continue
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
            moved += 1
    return moved
