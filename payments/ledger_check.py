"""The ledger's invariants (docs/payouts.md#the-ledger), for `manage.py ledger_check` and the daily beat.

1. Every entry is balanced: its lines sum to zero in each currency.
2. Per task (source `task:<uuid>`): paid = refunded + fee + seller net + still held, with held never
   negative, and the earning's own record (gross = fee + net) agrees with its ledger entry.
3. Per owner and currency: pending + available + paid_out + frozen = earnings - reversals - chargebacks.
"""

from __future__ import annotations

from collections import defaultdict
from decimal import Decimal

from django.db.models import Sum

from payments import ledger
from payments.models import Earning, LedgerLine

ZERO = Decimal(0)


def ledger_problems() -> list[str]:
    """Every broken invariant, one line each naming the offending rows; [] when the ledger is sound."""
    return [*_unbalanced_entries(), *_task_problems(), *_owner_problems()]


def _unbalanced_entries() -> list[str]:
    rows = (
        LedgerLine.objects.values("entry_id", "entry__key", "currency")
        .annotate(total=Sum("amount"))
        .exclude(total=0)
        .order_by("entry_id")
    )
    return [
        f"entry #{row['entry_id']} ({row['entry__key']}) is unbalanced: {row['total']} {row['currency']}"
        for row in rows
    ]


def _task_problems() -> list[str]:
    sums: dict[tuple[str, str], dict[str, Decimal]] = defaultdict(lambda: defaultdict(lambda: ZERO))
    rows = (
        LedgerLine.objects.filter(source__startswith="task:")
        .exclude(account__in=(ledger.CASH, ledger.OUTSIDE))
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
    for earning in Earning.objects.filter(source__startswith="task:").only(*fields):
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
    held: dict[tuple[str, str], Decimal] = defaultdict(lambda: ZERO)  # the states, as credits
    taken: dict[tuple[str, str], Decimal] = defaultdict(lambda: ZERO)  # chargebacks
    rows = (
        LedgerLine.objects.exclude(owner_id="").values("owner_id", "currency", "account").annotate(total=Sum("amount"))
    )
    for row in rows:
        state = row["account"].rsplit(":", 1)[1]
        key = (row["owner_id"], row["currency"])
        if state in ledger.SELLER_STATES:
            held[key] -= row["total"]
        elif state == "chargebacks":
            taken[key] -= row["total"]
    earned: dict[tuple[str, str], Decimal] = defaultdict(lambda: ZERO)
    for row in Earning.objects.values("owner_id", "currency").annotate(
        net=Sum("amount"), reversed=Sum("reversed_amount")
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
    return problems
