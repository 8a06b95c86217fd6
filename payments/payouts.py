"""Paying sellers (docs/payouts.md): payout accounts, earnings, transfers, payouts and chargebacks.

Domain apps call `earning_record()` (inside the transaction that releases a payment) and the ledger
helpers for captures and refunds; everything else runs from the API, the beat and provider events.
Provider calls are made with no transaction open and an idempotency key derived from the row they
serve; the state change they lead to is recorded afterwards under the row's lock, once.
"""

from __future__ import annotations

import logging
from dataclasses import dataclass
from datetime import datetime, timedelta
from decimal import Decimal
from typing import Any
from uuid import UUID

from django.conf import settings
from django.db import IntegrityError, transaction
from django.db.models import Sum
from django.utils import timezone

from core.enqueue import enqueue_after_commit
from core.errors import EmailUnverified, NotFound, ProviderError, ProviderUnavailable
from payments import ledger
from payments.announce import announce
from payments.fees import fee_split, quantum
from payments.models import Chargeback, ChargebackState, Earning, EarningStatus, LedgerLine, Payout, PayoutAccount
from payments.providers import get_payment_provider
from payments.providers.base import PayoutAccountStatus
from payments.providers.stripe import payout_account_status
from payments.registry import EventRejected

logger = logging.getLogger(__name__)


# --- Payout accounts ------------------------------------------------------------------------------


@dataclass(frozen=True)
class Onboarding:
    account: PayoutAccount
    onboarding_url: str


def payout_account_start(*, owner, return_url: str = "", refresh_url: str = "") -> Onboarding:
    """Create the owner's payout account at the provider (once: the key is the owner's) and a fresh
    onboarding link. Starting again while onboarding (or to update details) answers a new link. 403
    `email_unverified` until the owner's address is verified: money goes only to a proven account
    (docs/decisions.md#identity-and-authentication)."""
    if not owner.email_verified:
        raise EmailUnverified()
    provider = get_payment_provider()
    account = PayoutAccount.objects.filter(owner=owner).first()
    if account is None:
        created = provider.create_payout_account(
            email=owner.mailing_address,  # the domain as IDNA 2008 A-labels (accounts.addresses)
            country="US",
            metadata={"owner_id": str(owner.pk)},
            idempotency_key=f"payout-account:{owner.pk}",
        )
        try:
            with transaction.atomic():
                account = PayoutAccount.objects.create(
                    owner=owner,
                    provider=provider.name,
                    provider_account_id=created.id,
                    status=created.status,
                    payouts_enabled=created.payouts_enabled,
                    display_name=created.display_name,
                )
        except IntegrityError:  # a concurrent start recorded the same account first
            account = PayoutAccount.objects.get(owner=owner)
    base = settings.PUBLIC_BASE_URL.rstrip("/")
    url = provider.create_onboarding_link(
        account_id=account.provider_account_id,
        return_url=return_url or f"{base}/docs/guide",
        refresh_url=refresh_url or return_url or f"{base}/docs/guide",
    )
    return Onboarding(account=account, onboarding_url=url)


def payout_account_for(*, owner) -> PayoutAccount:
    account = PayoutAccount.objects.filter(owner=owner).first()
    if account is None:
        raise NotFound("No payout account yet: POST /api/v1/payouts/account starts onboarding.")
    return account


def account_status_from_event(obj: dict[str, Any]) -> tuple[str, bool]:
    """Stripe's account object (the local provider's events have its shape) → (our status,
    payouts_enabled), by the one rule the Stripe adapter reads accounts with (a new account's past-due
    requirements are onboarding, not a restriction; see payments.providers.stripe)."""
    return payout_account_status(obj), obj.get("payouts_enabled") is True


@transaction.atomic
def payout_account_apply(*, provider_account_id: str, obj: dict[str, Any]) -> PayoutAccount | None:
    """`account.updated`: the account's state as the provider reports it (an unknown account is ignored)."""
    account = PayoutAccount.objects.select_for_update().filter(provider_account_id=provider_account_id).first()
    if account is None:
        logger.info("account.updated for unknown account %s ignored", provider_account_id)
        return None
    status, payouts_enabled = account_status_from_event(obj)
    requirements = obj.get("requirements") if isinstance(obj.get("requirements"), dict) else {}
    due = requirements.get("currently_due")
    profile = obj.get("business_profile") if isinstance(obj.get("business_profile"), dict) else {}
    account.status, account.payouts_enabled = status, payouts_enabled
    account.requirements = [str(item) for item in due] if isinstance(due, list) else []
    if isinstance(profile.get("name"), str) and profile["name"]:
        account.display_name = profile["name"][:200]
    account.save(update_fields=["status", "payouts_enabled", "requirements", "display_name", "updated_at"])
    if status == PayoutAccountStatus.RESTRICTED:
        logger.warning("payout account %s is restricted: %s", provider_account_id, account.requirements)
    return account


def _payable(account: PayoutAccount | None) -> bool:
    return account is not None and account.status == PayoutAccountStatus.ACTIVE and account.payouts_enabled


# --- Ledger helpers for the domain's movements -------------------------------------------------------


def ledger_captured(*, source: str, currency: str, amount: Decimal) -> None:
    """The poster's payment for `source` was captured: the platform holds it."""
    ledger.ledger_post(
        kind="captured",
        source=source,
        key=f"captured:{source}",
        currency=currency,
        lines=[(ledger.CASH, amount), (ledger.HELD, -amount)],
    )


def ledger_refunded(*, source: str, currency: str, amount: Decimal, key: str) -> None:
    """Held money for `source` went back to the poster (a dispute's refund)."""
    ledger.ledger_post(
        kind="refunded",
        source=source,
        key=f"refunded:{key}",
        currency=currency,
        lines=[(ledger.HELD, amount), (ledger.REFUNDS, -amount)],
    )


# --- Earnings ------------------------------------------------------------------------------------------


def _shown(amount: Decimal, currency: str) -> str:
    """Money in events as in the API: a string in the currency's minor-unit places."""
    return str(amount.quantize(quantum(currency)))


def earning_data(earning: Earning) -> dict[str, Any]:
    return {
        "earning_id": earning.id,
        "source": earning.source,
        "currency": earning.currency,
        "gross": _shown(earning.gross, earning.currency),
        "fee": _shown(earning.fee, earning.currency),
        "amount": _shown(earning.amount, earning.currency),
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
        _chargeback_apply(earning, opened.id)
    elif earlier:
        _chargeback_apply(earning, earlier[0].id)
        _chargeback_settle(earning, earlier[0].id, won=False)
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
    if not _payable(account):
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


# --- Payouts -------------------------------------------------------------------------------------------


def payout_data(payout: Payout) -> dict[str, Any]:
    return {
        "payout_id": payout.id,
        "amount": _shown(payout.amount, payout.currency),
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
        if not _payable(account):
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


# --- Card chargebacks --------------------------------------------------------------------------------


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
    return _chargeback_apply(earning, dispute_id)


def _chargeback_apply(earning: Earning, dispute_id: str) -> Earning:
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
    return _chargeback_settle(earning, dispute_id, won=won)


def _chargeback_settle(earning: Earning, dispute_id: str, *, won: bool) -> Earning:
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


# --- Refunds after release ---------------------------------------------------------------------------


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
