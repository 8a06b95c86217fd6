"""Payouts (docs/payouts.md#payouts): the beat's run, an owner's available money claimed as one payout,
then moved with no lock held as one transfer (what the connected account does not hold yet) and one
payout of the same amount, each recorded once; failures give the claim back; a debt is recovered from
money sitting in the connected account (docs/payouts.md#recovery).

Lock order, everywhere: the payout account, then a payout (or a reversal), then earnings."""

from __future__ import annotations

import logging
from datetime import datetime, timedelta
from decimal import Decimal
from typing import Any
from uuid import UUID

from django.conf import settings
from django.db import transaction
from django.db.models import Q, Sum
from django.utils import timezone

from core.http.errors import ProviderError, ProviderUnavailable
from core.ops.enqueue import enqueue_after_commit
from payments import ledger
from payments.announcements import announce
from payments.fees import quantum
from payments.models import Earning, EarningStatus, LedgerLine, Payout, PayoutAccount, TransferReversal
from payments.providers import get_payment_provider
from payments.registry import EventRejected
from payments.services.accounts import payable
from payments.services.earnings import earnings_settle, shown

logger = logging.getLogger(__name__)

ZERO = Decimal(0)
OPEN_EARNINGS = (EarningStatus.PENDING, EarningStatus.AVAILABLE)


def payout_data(payout: Payout) -> dict[str, Any]:
    return {
        "payout_id": payout.id,
        "amount": shown(payout.amount, payout.currency),
        "currency": payout.currency,
        "status": payout.status,
        "failure_reason": payout.failure_reason,
    }


# --- The run ------------------------------------------------------------------------------------------


def payouts_run(*, now: datetime | None = None) -> int:
    """Beat (PAYOUT_SCHEDULE): settle what is due, finish payouts and recoveries whose provider call did
    not get through, pay every owed owner with an active account their available money per currency, and
    recover what sits unowed in connected accounts. Everything in batches of PAYOUT_BATCH_SIZE by key
    (no owner waits for a later run). Returns how many payouts were made."""
    earnings_settle(now=now)
    unsent = Payout.objects.filter(status=Payout.Status.PENDING, provider_payout_id="")
    for payout_id in _keyset(unsent, "pk"):
        _quietly(payout_send, payout_id=payout_id)
    for reversal_id in _keyset(TransferReversal.objects.filter(status=TransferReversal.Status.PENDING), "pk"):
        _quietly(reversal_send, reversal_id=reversal_id)
    made = 0
    for owner_id, currency in _owed_owners():
        payout = payout_owner(owner_id=owner_id, currency=currency)
        if payout is not None:
            made += 1
            _quietly(payout_send, payout_id=payout.pk)
    for owner_id, currency in _holding_owners():
        _quietly(debt_recover, owner_id=owner_id, currency=currency)
    return made


def _keyset(queryset, field: str):
    """Every value of `field` in `queryset`, fetched PAYOUT_BATCH_SIZE at a time in key order."""
    after = None
    while True:
        page = queryset.order_by(field)
        page = page.filter(**{f"{field}__gt": after}) if after is not None else page
        values = list(page.values_list(field, flat=True)[: settings.PAYOUT_BATCH_SIZE])
        yield from values
        if len(values) < settings.PAYOUT_BATCH_SIZE:
            return
        after = values[-1]


def _owner_sums(account_suffix: str, having: Q):
    """(owner_id, currency) whose `seller:<id>:<suffix>` lines sum as `having` says, by owner in batches."""
    after: tuple[str, str] | None = None
    while True:
        lines = LedgerLine.objects.filter(account__endswith=account_suffix).exclude(owner_id="")
        if after is not None:
            lines = lines.filter(Q(owner_id__gt=after[0]) | Q(owner_id=after[0], currency__gt=after[1]))
        rows = list(
            lines.values("owner_id", "currency")
            .annotate(total=Sum("amount"))
            .filter(having)
            .order_by("owner_id", "currency")
            .values_list("owner_id", "currency")[: settings.PAYOUT_BATCH_SIZE]
        )
        yield from rows
        if len(rows) < settings.PAYOUT_BATCH_SIZE:
            return
        after = rows[-1]


def _owed_owners():
    """Owners whose available balance is a credit (money owed to them), from the ledger itself: a won
    chargeback can make money available again without any earning being available."""
    return _owner_sums(":available", Q(total__lt=0))


def _holding_owners():
    """Owners whose connected account holds money in the ledger's money group (a failed payout's)."""
    return _owner_sums(":connected", Q(total__gt=0))


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


def _stale(row_created: datetime) -> bool:
    """Older than the provider remembers an idempotency key (docs/payouts.md#retries-after-a-day): a create
    retried now could make a second object, so the first attempt's is looked up first."""
    return row_created < timezone.now() - timedelta(hours=settings.PROVIDER_IDEMPOTENCY_WINDOW_HOURS)


def _lock_account(owner_id) -> PayoutAccount | None:
    return PayoutAccount.objects.select_for_update().filter(owner_id=owner_id).first()


# --- The connected account's balance -------------------------------------------------------------------


def connected_free(*, owner_id, currency: str) -> Decimal:
    """What the owner's connected account holds (the ledger's money group) that no open payout or
    recovery will take: the balance, minus each pending payout's amount not covered by a transfer still
    to come, minus pending recoveries. Read under the payout account's lock."""
    balance = ledger.money_balance(ledger.connected(owner_id), currency)
    open_payouts = Payout.objects.filter(owner_id=owner_id, currency=currency, status=Payout.Status.PENDING)
    reserved = ZERO
    for amount, transfer_amount, transfer_id in open_payouts.values_list("amount", "transfer_amount", "transfer_id"):
        reserved += amount - (ZERO if transfer_id else transfer_amount)
    recovering = TransferReversal.objects.filter(
        owner_id=owner_id, currency=currency, status=TransferReversal.Status.PENDING
    ).aggregate(total=Sum("amount"))["total"]
    return balance - reserved - (recovering or ZERO)


# --- A payout: claim, send, settle -----------------------------------------------------------------------


def payout_owner(*, owner_id, currency: str) -> Payout | None:
    """Claim the owner's available money in `currency` as one pending payout, under the payout account's
    lock (one claim at a time per owner) and the locks of the owner's open earnings (so a chargeback,
    a refund or the settle job waits, or is seen): the balance is read after both. The ledger moves the
    amount from available to paid_out; the earnings it covers are bound to it (paid out once its transfer
    is recorded). The transfer is the amount minus what the connected account already holds free. A
    balance of zero or less (a debt) pays nothing: later earnings pay the debt back first."""
    with transaction.atomic():
        account = _lock_account(owner_id)
        if not payable(account):
            return None
        earnings = list(
            Earning.objects.select_for_update()
            .filter(owner_id=owner_id, currency=currency, status__in=OPEN_EARNINGS, payout__isnull=True)
            .order_by("pk")
            .values_list("pk", "status")
        )
        balance = ledger.seller_balances(owner_id).get(currency, {}).get("available", ZERO)
        amount = balance.quantize(quantum(currency))
        if amount <= 0:
            return None
        free = max(connected_free(owner_id=owner_id, currency=currency), ZERO)
        payout = Payout(
            owner_id=owner_id,
            account=account,
            amount=amount,
            currency=currency,
            transfer_amount=max(amount - free, ZERO),
        )
        payout.idempotency_key = f"payout:{payout.id}"
        payout.save()
        covered = [pk for pk, status in earnings if status == EarningStatus.AVAILABLE]
        Earning.objects.filter(pk__in=covered).update(payout=payout, updated_at=timezone.now())
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
    """Make a claimed payout at the provider, no lock held: its transfer (key `payout:<id>:transfer`, when
    the connected account needs one), then the payout (key `payout:<id>`), each recorded at once. A row
    older than the provider's key lifetime looks each up before creating it. A create the provider
    refuses fails the payout at once, its money available again (docs/payouts.md#payout-states)."""
    payout = Payout.objects.select_related("account").get(pk=payout_id)
    if payout.status != Payout.Status.PENDING or payout.provider_payout_id:
        return payout
    provider = get_payment_provider()
    stale = _stale(payout.created_at)
    try:
        if payout.transfer_amount > 0 and not payout.transfer_id:
            transfer = None
            if stale:
                transfer = provider.find_transfer(
                    transfer_group=f"payout:{payout.id}", metadata_key="payout_id", metadata_value=str(payout.id)
                )
            if transfer is None:
                transfer = provider.create_transfer(
                    account_id=payout.account.provider_account_id,
                    amount=payout.transfer_amount,
                    currency=payout.currency,
                    transfer_group=f"payout:{payout.id}",
                    metadata={"payout_id": str(payout.id)},
                    idempotency_key=f"payout:{payout.id}:transfer",
                )
            payout = _transfer_record(payout_id=payout.pk, transfer_id=transfer.id, amount=transfer.amount)
            if payout.status != Payout.Status.PENDING:
                return payout
        elif payout.transfer_amount <= 0:
            with transaction.atomic():
                _earnings_paid_out(payout, transfer_id=_funding_transfer(payout))
        sent = None
        if stale:
            sent = provider.find_payout(account_id=payout.account.provider_account_id, payout_id=str(payout.id))
        if sent is None:
            sent = provider.create_payout(
                account_id=payout.account.provider_account_id,
                amount=payout.amount,
                currency=payout.currency,
                metadata={"payout_id": str(payout.id)},
                idempotency_key=payout.idempotency_key,
            )
    except ProviderError as exc:
        return payout_refused(payout_id=payout.pk, reason=str(exc))
    Payout.objects.filter(pk=payout.pk, provider_payout_id="").update(provider_payout_id=sent.id)
    if sent.status == "paid":
        return payout_settle(provider_payout_id=sent.id, paid=True)
    if sent.status in ("failed", "canceled"):
        return payout_settle(
            provider_payout_id=sent.id, paid=False, reason=sent.failure_reason, canceled=sent.status == "canceled"
        )
    return Payout.objects.get(pk=payout.pk)


def _transfer_record(*, payout_id, transfer_id: str, amount: Decimal) -> Payout:
    """The payout's transfer was made: once, the money moves to the connected account in the ledger, and
    the earnings the payout covers are paid out with this transfer."""
    with transaction.atomic():
        owner_id = Payout.objects.values_list("owner_id", flat=True).get(pk=payout_id)
        _lock_account(owner_id)
        payout = Payout.objects.select_for_update().get(pk=payout_id)
        if payout.transfer_id:
            return payout
        payout.transfer_id = transfer_id
        payout.save(update_fields=["transfer_id", "updated_at"])
        ledger.ledger_post(
            kind="transfer",
            source=f"payout:{payout.id}",
            key=f"transfer:payout:{payout.id}",
            currency=payout.currency,
            lines=[(ledger.connected(owner_id), amount), (ledger.CASH, -amount)],
            provider_ref=transfer_id,
            memo=f"payout {payout.id}",
        )
        _earnings_paid_out(payout, transfer_id=transfer_id)
    return payout


def _funding_transfer(payout: Payout) -> str:
    """The transfer whose money the connected account holds for a payout that needs none: the owner's
    newest payout transfer (a failed payout's), else the newest transfer of an earning of theirs."""
    earlier = (
        Payout.objects.filter(owner_id=payout.owner_id, currency=payout.currency)
        .exclude(transfer_id="")
        .order_by("-created_at")
        .values_list("transfer_id", flat=True)
        .first()
    )
    return earlier or (
        Earning.objects.filter(owner_id=payout.owner_id, currency=payout.currency)
        .exclude(transfer_id="")
        .order_by("-created_at")
        .values_list("transfer_id", flat=True)
        .first()
        or ""
    )


def _earnings_paid_out(payout: Payout, *, transfer_id: str) -> None:
    """The payout's available earnings are paid out, with the transfer that moved their money. One frozen
    or refunded since the claim gets no transfer: its money is a debt now, netted or recovered."""
    now = timezone.now()
    Earning.objects.filter(payout=payout, status=EarningStatus.AVAILABLE).update(
        status=EarningStatus.PAID_OUT, paid_out_at=now, updated_at=now
    )
    Earning.objects.filter(payout=payout, status=EarningStatus.PAID_OUT, transfer_id="").update(
        transfer_id=transfer_id, updated_at=now
    )


def payout_refused(*, payout_id, reason: str) -> Payout:
    """The provider refused the payout's transfer or payout at create (balance, minimum, currency): the
    payout is failed at once with the reason, its claim and earnings available again, never left pending."""
    with transaction.atomic():
        owner_id = Payout.objects.values_list("owner_id", flat=True).get(pk=payout_id)
        _lock_account(owner_id)
        payout = Payout.objects.select_for_update().get(pk=payout_id)
        if payout.status == Payout.Status.PENDING:
            _payout_undo(payout, status=Payout.Status.FAILED, reason=reason or "refused by the provider")
    return payout


def payout_settle(
    *,
    provider_payout_id: str,
    paid: bool,
    reason: str = "",
    payout_id: str = "",
    account: str | None = None,
    canceled: bool = False,
) -> Payout | None:
    """`payout.paid` / `payout.failed` / `payout.canceled` (or the provider's answer to payout_send), once
    each. Paid: the money leaves the connected account for the bank. Failed or canceled, while pending or
    after paid (Stripe shows some failed payouts as paid first): the claim goes back to available, and
    money booked as sent comes back to the connected account, so the next run pays it again without a
    new transfer. `payout_id` (the event's metadata, which payout_send sets) finds a payout whose
    create's answer never reached us.

    `account` is a provider event's connected account (None for the provider's own answer to payout_send):
    an event of any other account than the payout's is refused (EventRejected) before it changes anything,
    so one connected account's events cannot settle, or claim by metadata, another account's payout."""
    with transaction.atomic():
        found = Payout.objects.filter(provider_payout_id=provider_payout_id).first()
        if found is None and _uuid(payout_id):
            found = Payout.objects.filter(pk=payout_id, provider_payout_id="").first()
        if found is None:
            logger.info("payout event for unknown payout %s ignored", provider_payout_id)
            return None
        paid_to = PayoutAccount.objects.values_list("provider_account_id", flat=True).get(pk=found.account_id)
        if account is not None and account != paid_to:
            raise EventRejected(
                f"Payout event of account {account or '(none)'} for payout {found.id}, which is paid to {paid_to}."
            )
        _lock_account(found.owner_id)
        payout = Payout.objects.select_for_update().get(pk=found.pk)
        if payout.provider_payout_id not in ("", provider_payout_id):
            logger.info("payout event %s for payout %s, bound to another", provider_payout_id, payout.id)
            return payout
        if not payout.provider_payout_id:
            payout.provider_payout_id = provider_payout_id
            payout.save(update_fields=["provider_payout_id", "updated_at"])
        if paid:
            if payout.status == Payout.Status.PENDING:
                _payout_paid(payout)
            elif payout.status != Payout.Status.PAID:
                logger.warning("payout %s is %s; a later paid event is ignored", payout.id, payout.status)
            return payout
        if payout.status in (Payout.Status.PENDING, Payout.Status.PAID):
            status = Payout.Status.CANCELED if canceled else Payout.Status.FAILED
            _payout_undo(payout, status=status, reason=reason or status)
    return payout


def _payout_paid(payout: Payout) -> None:
    """Inside the caller's transaction (locks held): the money left the connected account for the bank."""
    payout.status, payout.paid_at = Payout.Status.PAID, timezone.now()
    payout.save(update_fields=["status", "paid_at", "updated_at"])
    _earnings_paid_out(payout, transfer_id=payout.transfer_id or _funding_transfer(payout))
    ledger.ledger_post(
        kind="payout_paid",
        source=f"payout:{payout.id}",
        key=f"payout-paid:{payout.id}",
        currency=payout.currency,
        lines=[(ledger.OUTSIDE, payout.amount), (ledger.connected(payout.owner_id), -payout.amount)],
        provider_ref=payout.provider_payout_id,
    )
    announce("payout.paid", payout_data(payout), payout.owner_id)


def _payout_undo(payout: Payout, *, status: str, reason: str) -> None:
    """Inside the caller's transaction (locks held): a pending or paid payout failed or was canceled. Its
    claim goes back to available, its earnings too (their money, if transferred, now sits in the connected
    account, which the next payout uses first); money booked as paid out comes back. A recovery is
    queued after commit, for money the seller is no longer owed (docs/payouts.md#recovery)."""
    was_paid = payout.status == Payout.Status.PAID
    payout.status, payout.failure_reason = status, (reason or status)[:500]
    payout.save(update_fields=["status", "failure_reason", "updated_at"])
    now = timezone.now()
    Earning.objects.filter(payout=payout, status=EarningStatus.PAID_OUT).update(status=EarningStatus.AVAILABLE)
    Earning.objects.filter(payout=payout).update(payout=None, paid_out_at=None, transfer_id="", updated_at=now)
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
    if was_paid:
        ledger.ledger_post(
            kind="payout_returned",
            source=f"payout:{payout.id}",
            key=f"payout-returned:{payout.id}",
            currency=payout.currency,
            lines=[(ledger.connected(payout.owner_id), payout.amount), (ledger.OUTSIDE, -payout.amount)],
            provider_ref=payout.provider_payout_id,
        )
    logger.error("payout %s to %s %s: %s", payout.id, payout.account_id, status, payout.failure_reason)
    announce("payout.failed", payout_data(payout), payout.owner_id)
    enqueue_after_commit("payments.tasks.recover_debt", str(payout.owner_id), payout.currency)


# --- Recovery -----------------------------------------------------------------------------------------


def debt_recover(*, owner_id, currency: str, debt_key: str = "") -> TransferReversal | None:
    """Take back from the owner's connected account what it holds beyond what they are owed
    (docs/payouts.md#recovery): after a refund or chargeback debited a paid-out earning while a failed
    payout's money sat there. Claimed under the payout account's lock (a `TransferReversal`, key
    `recovery:<debt_key>` when the caller names the debt's ledger entry), reversed at the provider with no
    lock held, recorded once. Nothing to do (None) when the account holds nothing unowed. Call it after
    committing the debt; safe to call twice."""
    with transaction.atomic():
        if _lock_account(owner_id) is None:
            return None
        pending = TransferReversal.objects.filter(
            owner_id=owner_id, currency=currency, status=TransferReversal.Status.PENDING
        ).first()
        reversal = pending or _recovery_claim(owner_id=owner_id, currency=currency, debt_key=debt_key)
    if reversal is None:
        return None
    return reversal_send(reversal_id=reversal.pk)


def _recovery_claim(*, owner_id, currency: str, debt_key: str) -> TransferReversal | None:
    owed = max(ledger.seller_balances(owner_id).get(currency, {}).get("available", ZERO), ZERO)
    excess = (connected_free(owner_id=owner_id, currency=currency) - owed).quantize(quantum(currency))
    if excess <= 0:
        return None
    transfer_id, room = _reversible_transfer(owner_id=owner_id, currency=currency)
    if not transfer_id:
        logger.error("owner %s: %s %s to recover, but no transfer to reverse", owner_id, excess, currency)
        return None
    done = TransferReversal.objects.filter(owner_id=owner_id, currency=currency).count()
    key = f"recovery:{debt_key}" if debt_key else f"recovery:{owner_id}:{currency}:{done + 1}"
    reversal, created = TransferReversal.objects.get_or_create(
        key=key,
        defaults={
            "owner_id": owner_id,
            "currency": currency,
            "amount": min(excess, room),
            "transfer_id": transfer_id,
        },
    )
    return reversal if created or reversal.status == TransferReversal.Status.PENDING else None


def _reversible_transfer(*, owner_id, currency: str) -> tuple[str, Decimal]:
    """The owner's newest payout transfer with something left to reverse, and how much is left."""
    transfers = (
        Payout.objects.filter(owner_id=owner_id, currency=currency, transfer_amount__gt=0)
        .exclude(transfer_id="")
        .order_by("-created_at")
        .values_list("transfer_id", "transfer_amount")
    )
    for transfer_id, amount in transfers.iterator():
        taken = (
            TransferReversal.objects.filter(transfer_id=transfer_id)
            .exclude(status=TransferReversal.Status.FAILED)
            .aggregate(total=Sum("amount"))["total"]
        )
        if amount - (taken or ZERO) > 0:
            return transfer_id, amount - (taken or ZERO)
    return "", ZERO


def reversal_send(*, reversal_id) -> TransferReversal:
    """Make a claimed recovery at the provider (no lock held; the key is the reversal's), then record it
    once: the money comes back from the connected account to the platform's balance. A refusal fails it
    (logged for staff); the run claims a new one if money is still unowed there."""
    reversal = TransferReversal.objects.get(pk=reversal_id)
    if reversal.status != TransferReversal.Status.PENDING:
        return reversal
    try:
        made = get_payment_provider().reverse_transfer(
            transfer_id=reversal.transfer_id, amount=reversal.amount, idempotency_key=reversal.key
        )
    except ProviderError as exc:
        TransferReversal.objects.filter(pk=reversal.pk, status=TransferReversal.Status.PENDING).update(
            status=TransferReversal.Status.FAILED, failure_reason=str(exc)[:500], updated_at=timezone.now()
        )
        logger.error("recovery %s of %s failed at the provider: %s", reversal.key, reversal.transfer_id, exc)
        return TransferReversal.objects.get(pk=reversal.pk)
    with transaction.atomic():
        _lock_account(reversal.owner_id)
        reversal = TransferReversal.objects.select_for_update().get(pk=reversal.pk)
        if reversal.status == TransferReversal.Status.PENDING:
            reversal.status = TransferReversal.Status.DONE
            reversal.save(update_fields=["status", "updated_at"])
            _reversal_post(reversal, kind="recovered", provider_ref=made.reversal_id)
    return reversal


def _reversal_post(reversal: TransferReversal, *, kind: str, provider_ref: str = "") -> None:
    """The money back in the platform's balance, naming the reversal (or, when the provider's answer did not
    name it, the transfer reversed)."""
    ledger.ledger_post(
        kind=kind,
        source=f"reversal:{reversal.pk}",
        key=reversal.key,
        currency=reversal.currency,
        lines=[(ledger.CASH, reversal.amount), (ledger.connected(reversal.owner_id), -reversal.amount)],
        provider_ref=provider_ref or reversal.transfer_id,
        memo=f"{reversal.get_origin_display()} of {reversal.transfer_id}",
    )


def transfer_reversed(*, transfer_id: str, amount_reversed: Decimal, currency: str) -> TransferReversal | None:
    """`transfer.reversed`: the provider says `amount_reversed` of our transfer is reversed in total. What
    our own reversals do not explain was made elsewhere (the dashboard): recorded in the money group
    (the connected account holds less), the seller's claims unchanged, so what they are still owed is
    transferred again by the next payout; staff are told. Once per total (docs/payouts.md#events)."""
    with transaction.atomic():
        owner_id = _transfer_owner(transfer_id)
        if owner_id is None:
            logger.info("transfer.reversed for unknown transfer %s ignored", transfer_id)
            return None
        _lock_account(owner_id)
        known = (
            TransferReversal.objects.filter(transfer_id=transfer_id)
            .exclude(status=TransferReversal.Status.FAILED)
            .aggregate(total=Sum("amount"))["total"]
            or ZERO
        )
        known += (
            Earning.objects.filter(transfer_id=transfer_id, status=EarningStatus.REVERSED).aggregate(
                total=Sum("reversed_amount")
            )["total"]
            or ZERO
        )
        more = amount_reversed - known
        if more <= 0:
            return None
        reversal, created = TransferReversal.objects.get_or_create(
            key=f"elsewhere:{transfer_id}:{amount_reversed}",
            defaults={
                "owner_id": owner_id,
                "currency": currency,
                "amount": more,
                "transfer_id": transfer_id,
                "origin": TransferReversal.Origin.ELSEWHERE,
                "status": TransferReversal.Status.DONE,
            },
        )
        if created:
            _reversal_post(reversal, kind="transfer_reversed")
            logger.error(
                "transfer %s of owner %s: %s %s reversed elsewhere; the next payout transfers what they are owed",
                transfer_id,
                owner_id,
                more,
                currency,
            )
    return reversal


def _transfer_owner(transfer_id: str):
    owner = Payout.objects.filter(transfer_id=transfer_id).values_list("owner_id", flat=True).first()
    return owner or Earning.objects.filter(transfer_id=transfer_id).values_list("owner_id", flat=True).first()
