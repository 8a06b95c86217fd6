"""The ledger's invariants (docs/payouts.md#the-ledger), for `manage.py ledger_check` and the daily beat.

1. Every entry is balanced: its lines sum to zero in each currency, in each group (claims, money).
2. Per task (source `task:<uuid>`): paid = refunded + fee + seller net + still held, with held never
   negative, and the earning's own record (gross = fee + net) agrees with its ledger entry.
3. Per owner and currency: pending + available + paid_out + frozen = earnings - reversals - chargebacks,
   and the connected account's balance (money group) is never negative.
4. Every payout marked paid has its payout entry and, when it needed one, its transfer and transfer
   entry; every earning paid out names the transfer that moved its money.

It streams: rows are read in batches by key (tasks, owners, payouts), so no table is held in memory.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Iterator
from decimal import Decimal

from django.db.models import Q, Sum

from payments import ledger
from payments.models import Earning, EarningStatus, LedgerEntry, LedgerLine, Payout

ZERO = Decimal(0)
BATCH = 1000
MONEY = Q(account__in=(ledger.CASH, ledger.OUTSIDE)) | Q(account__endswith=":connected")


def ledger_problems() -> list[str]:
    """Every broken invariant, one line each naming the offending rows; [] when the ledger is sound."""
    return [*_unbalanced_entries(), *_task_problems(), *_owner_problems(), *_payout_problems()]


def _keys(queryset, field: str) -> Iterator[list]:
    """The distinct values of `field`, BATCH at a time in order (keyset pagination)."""
    after = None
    while True:
        page = queryset.order_by(field)
        page = page.filter(**{f"{field}__gt": after}) if after is not None else page
        values = list(page.values_list(field, flat=True).distinct()[:BATCH])
        if values:
            yield values
        if len(values) < BATCH:
            return
        after = values[-1]


def _unbalanced_entries() -> list[str]:
    problems = []
    for group, lines in (("claims", LedgerLine.objects.exclude(MONEY)), ("money", LedgerLine.objects.filter(MONEY))):
        rows = (
            lines.values("entry_id", "entry__key", "currency")
            .annotate(total=Sum("amount"))
            .exclude(total=0)
            .order_by("entry_id")
        )
        problems += [
            f"entry #{row['entry_id']} ({row['entry__key']}) is unbalanced: {row['total']} {row['currency']} ({group})"
            for row in rows.iterator()
        ]
    return problems


def _task_problems() -> list[str]:
    problems = []
    for sources in _keys(LedgerLine.objects.filter(source__startswith="task:"), "source"):
        problems += _tasks_checked(sources)
    orphans = Earning.objects.filter(source__startswith="task:").exclude(
        source__in=LedgerLine.objects.filter(source__startswith="task:").values("source")
    )
    problems += [f"earning {e.pk} ({e.source}): no ledger entry" for e in orphans.only("pk", "source").iterator()]
    return problems


def _tasks_checked(sources: list[str]) -> list[str]:
    sums: dict[tuple[str, str], dict[str, Decimal]] = defaultdict(lambda: defaultdict(lambda: ZERO))
    rows = (
        LedgerLine.objects.filter(source__in=sources)
        .exclude(MONEY)
        .values("source", "currency", "account", "entry__kind")
        .annotate(total=Sum("amount"))
    )
    for row in rows:
        bucket = sums[(row["source"], row["currency"])]
        account, kind, total = row["account"], row["entry__kind"], row["total"]
        if account == ledger.CAPTURED:
            bucket["paid"] += total
        elif account == ledger.HELD:
            bucket["held"] -= total
        elif account == ledger.FEES:
            bucket["fee"] -= total
        elif account == ledger.REFUNDS:
            bucket["refunded"] -= total
        elif kind == "released" and account.endswith(":pending"):
            bucket["net"] -= total
        elif kind == "reversed" and account.startswith("seller:"):
            bucket["net"] -= total  # a refund after release takes the net back
    problems = []
    for (source, currency), bucket in sorted(sums.items()):
        paid, held = bucket["paid"], bucket["held"]
        accounted = bucket["refunded"] + bucket["fee"] + bucket["net"] + held
        if paid != accounted:
            problems.append(
                f"{source}: paid {paid} {currency} != refunded {bucket['refunded']} + fee {bucket['fee']} "
                f"+ net {bucket['net']} + held {held}"
            )
        if held < 0:
            problems.append(f"{source}: more released or refunded than paid (held {held} {currency})")
    fields = ("source", "currency", "gross", "fee", "amount", "reversed_amount")
    for earning in Earning.objects.filter(source__in=sources).only(*fields):
        bucket = sums.get((earning.source, earning.currency))
        if earning.gross != earning.fee + earning.amount:
            problems.append(f"earning {earning.pk} ({earning.source}): gross {earning.gross} != fee + net")
        # A refund after release reverses the whole earning, fee included.
        fee = ZERO if earning.reversed_amount else earning.fee
        if bucket is None or bucket["fee"] != fee or bucket["net"] != earning.amount - earning.reversed_amount:
            problems.append(
                f"earning {earning.pk} ({earning.source}): fee {earning.fee} / net {earning.amount} "
                f"{earning.currency} not what the ledger released"
            )
    return problems


def _owner_problems() -> list[str]:
    problems = []
    for owners in _keys(LedgerLine.objects.exclude(owner_id=""), "owner_id"):
        problems += _owners_checked(owners)
    return problems


def _owners_checked(owners: list[str]) -> list[str]:
    held: dict[tuple[str, str], Decimal] = defaultdict(lambda: ZERO)  # the states, as credits
    taken: dict[tuple[str, str], Decimal] = defaultdict(lambda: ZERO)  # chargebacks
    connected: dict[tuple[str, str], Decimal] = defaultdict(lambda: ZERO)  # the money group, a debit
    rows = (
        LedgerLine.objects.filter(owner_id__in=owners)
        .values("owner_id", "currency", "account")
        .annotate(total=Sum("amount"))
    )
    for row in rows:
        state = row["account"].rsplit(":", 1)[1]
        key = (row["owner_id"], row["currency"])
        if state in ledger.SELLER_STATES:
            held[key] -= row["total"]
        elif state == "chargebacks":
            taken[key] -= row["total"]
        elif state == "connected":
            connected[key] += row["total"]
    earned: dict[tuple[str, str], Decimal] = defaultdict(lambda: ZERO)
    for row in (
        Earning.objects.filter(owner_id__in=owners)
        .values("owner_id", "currency")
        .annotate(net=Sum("amount"), reversed=Sum("reversed_amount"))
    ):
        earned[(str(row["owner_id"]), row["currency"])] = row["net"] - row["reversed"]
    problems = []
    for key in sorted(set(held) | set(earned) | set(taken)):
        owner_id, currency = key
        if held[key] != earned[key] - taken[key]:
            problems.append(
                f"owner {owner_id}: pending + available + paid_out + frozen = {held[key]} {currency}, but "
                f"earnings - reversals - chargebacks = {earned[key] - taken[key]}"
            )
    for (owner_id, currency), balance in sorted(connected.items()):
        if balance < 0:
            problems.append(f"owner {owner_id}: the connected account's balance is negative ({balance} {currency})")
    return problems


def _payout_problems() -> list[str]:
    problems = []
    paid = Payout.objects.filter(status=Payout.Status.PAID)
    for ids in _keys(paid, "pk"):
        payouts = list(Payout.objects.filter(pk__in=ids).only("pk", "transfer_amount", "transfer_id"))
        wanted = {f"payout-paid:{p.pk}" for p in payouts} | {
            f"transfer:payout:{p.pk}" for p in payouts if p.transfer_amount > 0
        }
        found = set(LedgerEntry.objects.filter(key__in=wanted).values_list("key", flat=True))
        for payout in payouts:
            if f"payout-paid:{payout.pk}" not in found:
                problems.append(f"payout {payout.pk} is paid, but the ledger has no payout-paid entry")
            if payout.transfer_amount > 0 and (not payout.transfer_id or f"transfer:payout:{payout.pk}" not in found):
                problems.append(f"payout {payout.pk} is paid, but its transfer was not made or not booked")
    untransferred = Earning.objects.filter(status=EarningStatus.PAID_OUT, transfer_id="")
    problems += [
        f"earning {pk} is paid out without a transfer" for pk in untransferred.values_list("pk", flat=True)[:100]
    ]
    return problems
