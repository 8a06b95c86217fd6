"""Payouts (docs/payouts.md#release): the beat's run, an owner's available money claimed as one payout,
sent to the provider with no lock held, and settled by its answer or its events, once."""

from __future__ import annotations

import logging
from datetime import datetime
from decimal import Decimal
from typing import Any
from uuid import UUID

from django.db import transaction
from django.db.models import Sum
from django.utils import timezone

from core.errors import ProviderError, ProviderUnavailable
from payments import ledger
from payments.announce import announce
from payments.fees import quantum
from payments.models import Earning, EarningStatus, LedgerLine, Payout, PayoutAccount
from payments.providers import get_payment_provider
from payments.registry import EventRejected
from payments.services.accounts import payable
from payments.services.earnings import earning_transfer, earnings_settle, shown

logger = logging.getLogger(__name__)


def payout_data(payout: Payout) -> dict[str, Any]:
    return {
        "payout_id": payout.id,
        "amount": shown(payout.amount, payout.currency),
        "currency": payout.currency,
        "status": payout.status,
        "failure_reason": payout.failure_reason,
    }


def payouts_run(*, now: datetime | None = None) -> int:
    """Beat (PAYOUT_SCHEDULE): settle what is due, make missing transfers, retry payouts whose provider
    call did not get through, and pay every owner with an active account their available money per
    currency. Owners without an active account keep accruing. Returns how many payouts were made."""
    earnings_settle(now=now)
    for earning_id in Earning.objects.filter(
        transfer_id="", status__in=(EarningStatus.PENDING, EarningStatus.AVAILABLE), owner__payout_account__isnull=False
    ).values_list("pk", flat=True)[:500]:
        _quietly(earning_transfer, earning_id=earning_id)
    for payout_id in Payout.objects.filter(status=Payout.Status.PENDING, provider_payout_id="").values_list(
        "pk", flat=True
    )[:500]:
        _quietly(payout_send, payout_id=payout_id)
    made = 0
    # Owners whose available balance is a credit (money owed to them), from the ledger itself: a won
    # chargeback can make money available again without any earning being available.
    owed = (
        LedgerLine.objects.filter(account__endswith=":available")
        .values("owner_id", "currency")
        .annotate(total=Sum("amount"))
        .filter(total__lt=0)
        .values_list("owner_id", "currency")
    )
    for owner_id, currency in list(owed)[:500]:
        payout = payout_owner(owner_id=owner_id, currency=currency)
        if payout is not None:
            made += 1
            _quietly(payout_send, payout_id=payout.pk)
    return made


def _uuid(value: str) -> UUID | None:
    try:
        return UUID(str(value))
    except ValueError:
        return None


def _quietly(function, **kwargs) -> None:
    try:
        function(**kwargs)
    except (ProviderError, ProviderUnavailable):
        logger.warning(
            "%s(%s) failed at the provider; the next run retries it", function.__name__, kwargs, exc_info=True
        )


def payout_owner(*, owner_id, currency: str) -> Payout | None:
    """Claim the owner's available money in `currency` as one pending payout, under the payout account's
    lock (one payout at a time per owner): the earnings it covers are marked paid out and the ledger moves
    the amount from available to paid_out, in one transaction. A balance of zero or less (a chargeback
    debited more than is available) pays nothing: later earnings pay the debt back first."""
    with transaction.atomic():
        account = PayoutAccount.objects.select_for_update().filter(owner_id=owner_id).first()
        if not payable(account):
            return None
        balance = ledger.seller_balances(owner_id).get(currency, {}).get("available", Decimal(0))
        earnings = Earning.objects.select_for_update().filter(
            owner_id=owner_id, currency=currency, status=EarningStatus.AVAILABLE, payout__isnull=True
        )
        if balance <= 0:
            return None
        payout = Payout(
            owner_id=owner_id, account=account, amount=balance.quantize(quantum(currency)), currency=currency
        )
        payout.idempotency_key = f"payout:{payout.id}"
        payout.save()
        now = timezone.now()
        earnings.update(status=EarningStatus.PAID_OUT, payout=payout, paid_out_at=now, updated_at=now)
        ledger.ledger_post(
            kind="payout",
            source=f"payout:{payout.id}",
            key=f"payout:{payout.id}",
            currency=currency,
            lines=[
                (ledger.seller(owner_id, "available"), payout.amount),
                (ledger.seller(owner_id, "paid_out"), -payout.amount),
            ],
        )
    return payout


def payout_send(*, payout_id: UUID | str) -> Payout:
    """Ask the provider to pay a claimed payout (no lock held; the key is the payout's), then record it."""
    payout = Payout.objects.select_related("account").get(pk=payout_id)
    if payout.status != Payout.Status.PENDING:
        return payout
    sent = get_payment_provider().create_payout(
        account_id=payout.account.provider_account_id,
        amount=payout.amount,
        currency=payout.currency,
        metadata={"payout_id": str(payout.id)},
        idempotency_key=payout.idempotency_key,
    )
    Payout.objects.filter(pk=payout.pk, provider_payout_id="").update(provider_payout_id=sent.id)
    if sent.status == "paid":
        return payout_settle(provider_payout_id=sent.id, paid=True)
    if sent.status == "failed":
        return payout_settle(provider_payout_id=sent.id, paid=False, reason=sent.failure_reason)
    return Payout.objects.get(pk=payout.pk)


def payout_settle(
    *, provider_payout_id: str, paid: bool, reason: str = "", payout_id: str = "", account: str | None = None
) -> Payout | None:
    """`payout.paid` / `payout.failed` (or the local provider's answer): once. A failed payout gives its
    money back to available (and its earnings too), to be paid by the next run. `payout_id` (the event's
    metadata, which payout_send sets) finds a payout whose create's answer never reached us.

    `account` is a provider event's connected account (None for the provider's own answer to payout_send):
    an event of any other account than the payout's is refused (EventRejected) before it changes anything,
    so one connected account's events cannot settle, or claim by metadata, another account's payout."""
    with transaction.atomic():
        payout = Payout.objects.select_for_update().filter(provider_payout_id=provider_payout_id).first()
        claimed_by_metadata = False
        if payout is None and _uuid(payout_id):
            payout = Payout.objects.select_for_update().filter(pk=payout_id, provider_payout_id="").first()
            claimed_by_metadata = payout is not None
        if payout is None:
            logger.info("payout event for unknown payout %s ignored", provider_payout_id)
            return None
        paid_to = PayoutAccount.objects.values_list("provider_account_id", flat=True).get(pk=payout.account_id)
        if account is not None and account != paid_to:
            raise EventRejected(
                f"Payout event of account {account or '(none)'} for payout {payout.id}, which is paid to {paid_to}."
            )
        if claimed_by_metadata:
            payout.provider_payout_id = provider_payout_id
            payout.save(update_fields=["provider_payout_id", "updated_at"])
        if payout.status != Payout.Status.PENDING:
            return payout
        now = timezone.now()
        if paid:
            payout.status, payout.paid_at = Payout.Status.PAID, now
            payout.save(update_fields=["status", "paid_at", "updated_at"])
            announce("payout.paid", payout_data(payout), payout.owner_id)
            return payout
        payout.status, payout.failure_reason = Payout.Status.FAILED, (reason or "failed")[:500]
        payout.save(update_fields=["status", "failure_reason", "updated_at"])
        Earning.objects.filter(payout=payout).update(
            status=EarningStatus.AVAILABLE, payout=None, paid_out_at=None, updated_at=now
        )
        ledger.ledger_post(
            kind="payout_failed",
            source=f"payout:{payout.id}",
            key=f"payout-failed:{payout.id}",
            currency=payout.currency,
            lines=[
                (ledger.seller(payout.owner_id, "paid_out"), payout.amount),
                (ledger.seller(payout.owner_id, "available"), -payout.amount),
            ],
        )
        logger.error("payout %s to %s failed: %s", payout.id, payout.account_id, payout.failure_reason)
        announce("payout.failed", payout_data(payout), payout.owner_id)
    return payout
