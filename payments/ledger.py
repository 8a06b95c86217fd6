"""A small double-entry ledger (docs/payouts.md#the-ledger).

Every money movement is one `LedgerEntry` whose `LedgerLine`s sum to zero per currency, posted in the
caller's transaction, the same one that changes the state it records. Debits are positive, credits
negative; the accounts are names, not rows, in two groups, each of which balances on its own in every
entry:

Claims: who the captured money belongs to.

    platform:captured        money captured from posters (debit)
    platform:held            captured, neither released nor refunded yet (credit while held)
    platform:fees            the platform's fee (credit)
    poster:refunds           money given back to posters (credit)
    seller:<id>:pending      a seller's released net, until the payment settles (credit)
    seller:<id>:available    settled, waiting for a payout (credit; negative after a chargeback debit)
    seller:<id>:paid_out     paid out to the seller's account (credit)
    seller:<id>:frozen       held back by an open card chargeback (credit)
    seller:<id>:chargebacks  taken back by chargebacks (credit)
    platform:disputed        what card disputes took from the platform's balance, and gave back (credit)
    platform:losses          what the platform bore of it: the amounts and the dispute fees (debit); the
                             sellers' chargebacks are what it got back from them

A payout claims the seller's available money (available -> paid_out) before anything moves; a payout
that fails, even after it was paid, gives it back (paid_out -> available). A debt (available below zero)
is netted from the next payout's claim (docs/payouts.md#recovery).

Money: where it is at the provider, posted by the movements the provider made (a capture, a refund, a
transfer, a reversal, a payout, a dispute's withdrawal), each entry naming the provider's object in
`provider_ref`; what the reconciliation (payments.reconcile) compares with the provider's balances.

    platform:cash            the platform's balance at the provider (debit)
    seller:<id>:connected    the seller's connected account's balance at the provider (debit)
    outside                  the world beyond the provider: posters' cards, sellers' banks, card
                             networks and the provider's fees (credit: money that came in)

Movements of the seller flow (docs/payouts.md#the-ledger): a payout's transfer T (connected Dr / cash Cr),
the payout P paid to the bank (outside Dr / connected Cr; back when it fails after paid), a reversal V
of a transfer, ours (a recovery) or made elsewhere (cash Dr / connected Cr).

An entry has a unique `key` derived from the movement (e.g. `released:task:<uuid>`): posting the same
movement twice finds the first entry and writes nothing.
"""

from __future__ import annotations

from collections import defaultdict
from decimal import Decimal

from django.db import IntegrityError, transaction
from django.db.models import Sum

from payments.models import LedgerEntry, LedgerLine

CAPTURED = "platform:captured"
HELD = "platform:held"
FEES = "platform:fees"
REFUNDS = "poster:refunds"
SELLER_STATES = ("pending", "available", "paid_out", "frozen")
LOSSES = "platform:losses"
DISPUTED = "platform:disputed"
CASH = "platform:cash"
OUTSIDE = "outside"


def seller(owner_id, state: str) -> str:
    return f"seller:{owner_id}:{state}"


def connected(owner_id) -> str:
    """The seller's connected account's balance at the provider (the money group)."""
    return f"seller:{owner_id}:connected"


def money_balance(account: str, currency: str) -> Decimal:
    """A money-group account's balance in `currency` (debit positive), e.g. a connected account's."""
    total = LedgerLine.objects.filter(account=account, currency=currency).aggregate(total=Sum("amount"))["total"]
    return total or Decimal(0)


def is_money(account: str) -> bool:
    """Whether `account` is in the money group (where it is at the provider), not the claims group."""
    return account in (CASH, OUTSIDE) or account.endswith(":connected")


class Unbalanced(ValueError):
    """Lines that do not sum to zero per currency: a bug in the caller, never written."""


def ledger_post(
    *,
    kind: str,
    source: str,
    key: str,
    currency: str,
    lines: list[tuple[str, Decimal]],
    memo: str = "",
    provider_ref: str = "",
) -> LedgerEntry:
    """Post one entry (account, amount) in `currency`, balanced in each group (claims, money); zero lines are
    left out. `provider_ref` names the provider's object a money movement is (tr_, po_, re_ ...).
    Idempotent by `key`."""
    lines = [(account, Decimal(amount)) for account, amount in lines if Decimal(amount) != 0]
    for group in (True, False):
        total = sum((amount for account, amount in lines if is_money(account) == group), Decimal(0))
        if total != 0:
            raise Unbalanced(f"entry {key}: the {'money' if group else 'claims'} lines sum to {total}, not 0")
    existing = LedgerEntry.objects.filter(key=key).first()
    if existing is not None:
        return existing
    try:
        with transaction.atomic():
            entry = LedgerEntry.objects.create(
                kind=kind, source=source, key=key, memo=memo[:500], provider_ref=provider_ref
            )
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
