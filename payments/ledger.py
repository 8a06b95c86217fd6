"""A small double-entry ledger (docs/payouts.md#the-ledger).

Every money movement is one `LedgerEntry` whose `LedgerLine`s sum to zero per currency, posted in the
caller's transaction, the same one that changes the state it records. Debits are positive, credits
negative; the accounts are names, not rows:

    platform:cash            money captured from posters (debit)
    platform:held            captured, neither released nor refunded yet (credit while held)
    platform:fees            the platform's fee (credit)
    poster:refunds           money given back to posters (credit)
    seller:<id>:pending      a seller's released net, until the payment settles (credit)
    seller:<id>:available    settled, waiting for a payout (credit; negative after a chargeback debit)
    seller:<id>:paid_out     paid out to the seller's account (credit)
    seller:<id>:frozen       held back by an open card chargeback (credit)
    seller:<id>:chargebacks  taken back by chargebacks (credit)

An entry has a unique `key` derived from the movement (e.g. `released:task:<uuid>`): posting the same
movement twice finds the first entry and writes nothing.
"""

from __future__ import annotations

from collections import defaultdict
from decimal import Decimal

from django.db import IntegrityError, transaction
from django.db.models import Sum

from payments.models import LedgerEntry, LedgerLine

CASH = "platform:cash"
HELD = "platform:held"
FEES = "platform:fees"
REFUNDS = "poster:refunds"
SELLER_STATES = ("pending", "available", "paid_out", "frozen")


def seller(owner_id, state: str) -> str:
    return f"seller:{owner_id}:{state}"


class Unbalanced(ValueError):
    """Lines that do not sum to zero per currency: a bug in the caller, never written."""


def ledger_post(
    *, kind: str, source: str, key: str, currency: str, lines: list[tuple[str, Decimal]], memo: str = ""
) -> LedgerEntry:
    """Post one balanced entry (account, amount) in `currency`; zero lines are left out. Idempotent by `key`."""
    lines = [(account, Decimal(amount)) for account, amount in lines if Decimal(amount) != 0]
    if sum((amount for _, amount in lines), Decimal(0)) != 0:
        raise Unbalanced(f"entry {key}: lines sum to {sum(a for _, a in lines)}, not 0")
    existing = LedgerEntry.objects.filter(key=key).first()
    if existing is not None:
        return existing
    try:
        with transaction.atomic():
            entry = LedgerEntry.objects.create(kind=kind, source=source, key=key, memo=memo[:500])
    except IntegrityError:  # a concurrent twin posted it first
        return LedgerEntry.objects.get(key=key)
    LedgerLine.objects.bulk_create(
        LedgerLine(
            entry=entry,
            account=account,
            owner_id=account.split(":")[1] if account.startswith("seller:") else "",
            source=source,
            currency=currency,
            amount=amount,
        )
        for account, amount in lines
    )
    return entry


def balances(**filters) -> dict[tuple[str, str], Decimal]:
    """Sum of the lines by (account, currency), debit positive."""
    rows = LedgerLine.objects.filter(**filters).values("account", "currency").annotate(total=Sum("amount"))
    return {(row["account"], row["currency"]): row["total"] for row in rows}


def seller_balances(owner_id) -> dict[str, dict[str, Decimal]]:
    """A seller's money by currency and state (pending, available, paid_out, frozen), as positive amounts."""
    found: dict[str, dict[str, Decimal]] = defaultdict(lambda: dict.fromkeys(SELLER_STATES, Decimal(0)))
    for (account, currency), total in balances(owner_id=str(owner_id)).items():
        state = account.rsplit(":", 1)[1]
        if state in SELLER_STATES:
            found[currency][state] = -total
    return dict(found)
