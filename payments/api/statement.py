"""What the sellers' API reads from the ledger (docs/payouts.md#the-sellers-api): the seller's statement
(every movement of their claims, newest first, with the balance after it) and what each payout covered.

The statement is a keyset page of the owner's claim lines plus one SUM of the lines older than the page,
so a page costs one index range and one aggregate, whatever the owner's history: nothing is read into
memory beyond the page.
"""

from __future__ import annotations

from collections import defaultdict
from dataclasses import dataclass
from datetime import datetime
from decimal import Decimal

from django.db.models import Exists, OuterRef, Q, QuerySet, Sum

from core.db import counters
from payments import ledger
from payments.counters import owner_earnings, owner_payouts
from payments.models import Earning, EarningStatus, LedgerEntry, LedgerLine, Payout

# The seller's claim accounts (payments.ledger), as `state`; the money group's `connected` is not a claim.
STATES = ("pending", "available", "paid_out", "frozen", "chargebacks", "recovered")
# Entries that move a payout's own money: not debts of the payout they belong to.
PAYOUT_KINDS = ("payout", "payout_failed", "payout_canceled")
FAILED_PAYOUT_KINDS = ("payout_failed", "payout_canceled")

REASONS = {
    "released": "Released for {what}",
    "available": "Hold ended for {what}: available for payout",
    "payout": "Paid out",
    "payout_failed": "Payout failed, money back",
    "payout_canceled": "Payout canceled, money back",
    "chargeback_frozen": "Frozen by a chargeback on {what}",
    "chargeback_debited": "Chargeback on {what}",
    "chargeback_won": "Chargeback won on {what}, money back",
    "chargeback_lost": "Chargeback lost on {what}",
    "reversed": "Refunded to the poster of {what}",
    "recovered": "Debt recovered from your account for {what}",
    "transfer_reversed": "Transfer reversed for {what}",
}


@dataclass(frozen=True)
class Movement:
    """One line of the statement, as the seller sees it: a credit to their state is a positive amount."""

    id: int
    created_at: datetime
    kind: str
    reason: str
    source: str
    state: str
    amount: Decimal
    currency: str
    balance_after: Decimal


def what(source: str) -> str:
    """`task:<uuid>` as "task <uuid>": the thing a movement is about, in words."""
    kind, _, ref = source.partition(":")
    return f"{kind} {ref}" if ref else source


def reason(kind: str, source: str) -> str:
    template = REASONS.get(kind)
    if template is None:
        return f"{kind.replace('_', ' ').capitalize()} ({what(source)})"
    return template.format(what=what(source))


def claim_accounts(owner_id) -> list[str]:
    return [ledger.seller(owner_id, state) for state in STATES]


def statement_lines(owner_id, *, currency: str | None = None) -> QuerySet[LedgerLine]:
    """The owner's claim lines, newest first (the line id is the posting order)."""
    lines = LedgerLine.objects.filter(owner_id=str(owner_id), account__in=claim_accounts(owner_id))
    if currency:
        lines = lines.filter(currency=currency)
    return lines.select_related("entry").order_by("-id")


def movements(owner_id, rows: list[LedgerLine]) -> list[Movement]:
    """The page's lines (newest first) as movements, each with its state's balance after it: the sum of
    the lines older than the page, then the page's own lines from the oldest up."""
    if not rows:
        return []
    oldest = rows[-1].id
    running: dict[tuple[str, str], Decimal] = defaultdict(Decimal)
    older = (
        LedgerLine.objects.filter(owner_id=str(owner_id), account__in=claim_accounts(owner_id), id__lt=oldest)
        .values("account", "currency")
        .annotate(total=Sum("amount"))
    )
    for row in older:
        running[(row["account"], row["currency"])] = row["total"]
    balances: dict[int, Decimal] = {}
    for line in reversed(rows):
        running[(line.account, line.currency)] += line.amount
        balances[line.id] = running[(line.account, line.currency)]
    return [
        Movement(
            id=line.id,
            created_at=line.entry.created_at,
            kind=line.entry.kind,
            reason=reason(line.entry.kind, line.entry.source),
            source=line.entry.source,
            state=line.account.rsplit(":", 1)[1],
            amount=-line.amount,  # the ledger's credits are the seller's gains
            currency=line.currency,
            balance_after=-balances[line.id],
        )
        for line in rows
    ]


# What a payout covered --------------------------------------------------------------------------------


@dataclass(frozen=True)
class Debt:
    """A movement of the owner's available balance, since the payout before, that the payout netted:
    positive when it took money (a chargeback, a refund of money already paid out), negative when it gave
    some back (a chargeback won)."""

    id: int
    created_at: datetime
    kind: str
    reason: str
    source: str
    amount: Decimal
    currency: str


def earnings_of(owner) -> QuerySet[Earning]:
    """The seller's earnings list, newest first (every status)."""
    return Earning.objects.filter(owner=owner).order_by("-created_at", "-id")


def earnings_total(owner) -> int:
    """The count of `earnings_of(owner)`, kept (`earnings.owner.<owner>`, docs/decisions.md#lists)."""
    return counters.count_of(owner_earnings(owner.pk))


def payouts_of(owner) -> QuerySet[Payout]:
    """The seller's payouts list, newest first (every status)."""
    return Payout.objects.filter(owner=owner).order_by("-created_at", "-id")


def payouts_total(owner) -> int:
    """The count of `payouts_of(owner)`, kept (`payouts.owner.<owner>`, docs/decisions.md#lists)."""
    return counters.count_of(owner_payouts(owner.pk))


def payout_earnings(payout: Payout) -> QuerySet[Earning]:
    return Earning.objects.filter(payout=payout).order_by("created_at", "id")


def payout_debts(payout: Payout) -> list[Debt]:
    """The owner's debts the payout netted: a payout claims the whole available balance, so they are the
    movements of that balance between the payout before it (one that was not given back) and this one,
    other than the covered earnings' own, the payouts', and those of earnings taken back before they were
    ever paid (whose movements cancel out)."""
    available = ledger.seller(payout.owner_id, "available")
    claim = (
        LedgerLine.objects.filter(entry__key=f"payout:{payout.id}", account=available)
        .values_list("id", flat=True)
        .first()
    )
    if claim is None:
        return []
    window = LedgerLine.objects.filter(account=available, currency=payout.currency)
    given_back = LedgerEntry.objects.filter(kind__in=FAILED_PAYOUT_KINDS, source=OuterRef("entry__source"))
    before = (
        window.filter(id__lt=claim, entry__kind="payout")
        .exclude(Exists(given_back))
        .order_by("-id")
        .values_list("id", flat=True)
        .first()
    )
    lines = list(
        window.filter(id__lt=claim, id__gt=before or 0)
        .exclude(entry__kind__in=PAYOUT_KINDS)
        .select_related("entry")
        .order_by("id")
    )
    sources = {line.source for line in lines}
    own_or_unpaid = set(
        Earning.objects.filter(owner_id=payout.owner_id, source__in=sources)
        .filter(Q(payout=payout) | ~Q(status=EarningStatus.PAID_OUT))
        .values_list("source", flat=True)
    )
    return [
        Debt(
            id=line.id,
            created_at=line.entry.created_at,
            kind=line.entry.kind,
            reason=reason(line.entry.kind, line.entry.source),
            source=line.entry.source,
            amount=line.amount,
            currency=line.currency,
        )
        for line in lines
        if line.source not in own_or_unpaid
    ]
