"""Reconciliation: do the ledger's books match what moved at the payment provider?
(docs/payouts.md#reconciliation)

The ledger's money group (payments.ledger) says where the money is at the provider: `platform:cash` is
the platform's balance, `seller:<id>:connected` a seller's connected account's balance, and every money
entry names the provider object that moved it (`provider_ref`: pi_, re_, tr_, trr_, po_, dp_). This
compares them with the provider, account by account (the platform, then each payout account of this
provider, PayoutAccount mapping its owner to the account):

1. **Movements the books do not have**: each of the provider's balance transactions (since `since`) whose
   source is no entry's `provider_ref`: a refund made in the provider's dashboard, a transfer recorded
   nowhere, a dispute nobody booked.
2. **Entries the provider does not know**: each money entry (since `since`) whose `provider_ref` is no
   source the provider listed, or that names no provider object at all.
3. **Balances**: each account's ledger total per currency against the provider's balance. A connected
   account holds only what we moved there, so its balance compares as it is; the platform's balance also
   holds money the ledger never tracks (subscriptions, credit top-ups: charges and refunds whose payment
   belongs to no task, i.e. without a `task:` transfer group and unknown to the ledger), which is taken out
   first. That needs the platform's whole history, so the platform's balance is compared only when
   `since` is None (the daily run); with `since`, only movements are matched.

Movements younger than GRACE are left out of 1 and 2: a provider call is made first and its record written
after it answers (never holding a lock across the call), so a movement can be seconds ahead of its entry.

It streams: the provider's transactions page by page, the ledger's entries and payout accounts by
iterator, the ledger looked up per chunk. What it keeps is the ids of the provider movements it saw (to
answer 2), so its memory grows with the window, not with the tables.
"""

from __future__ import annotations

import logging
from collections import defaultdict
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass
from datetime import datetime, timedelta
from decimal import Decimal
from itertools import islice

from django.db.models import Q, Sum
from django.utils import timezone

from payments import ledger
from payments.models import LedgerEntry, LedgerLine, PayoutAccount
from payments.providers import PaymentProvider, get_payment_provider
from payments.providers.base import BalanceTransaction

logger = logging.getLogger(__name__)

GRACE = timedelta(minutes=10)
# The provider's clock and ours differ, and an entry is written after its movement: look at the provider's
# movements from this much before `since`, so an entry just after `since` finds its movement.
MARGIN = timedelta(hours=1)
CHUNK = 500
# Platform movements of a payment that may belong to no task (the ledger tracks task money only).
PAYMENT_TYPES = ("charge", "payment", "refund", "payment_refund", "adjustment")


@dataclass(frozen=True)
class Difference:
    """One way the books and the provider disagree."""

    kind: str  # "balance" | "not_in_books" | "unknown_to_provider" | "no_provider_object"
    account: str  # the ledger's account: platform:cash, seller:<id>:connected
    currency: str = ""
    ledger: Decimal | None = None
    provider: Decimal | None = None
    ref: str = ""  # the provider's object (or the ledger entry, for an entry naming none)
    detail: str = ""

    def __str__(self) -> str:
        money = ""
        if self.ledger is not None or self.provider is not None:
            money = f" books {self.ledger} vs provider {self.provider} {self.currency.upper()}"
        ref = f" {self.ref}" if self.ref else ""
        return f"{self.kind} {self.account}{ref}:{money} {self.detail}".rstrip()


@dataclass(frozen=True)
class _Account:
    ledger_name: str  # platform:cash or seller:<id>:connected
    provider_id: str  # "" for the platform, else acct_...


def reconcile(
    *,
    since: datetime | None = None,
    provider: PaymentProvider | None = None,
    progress: Callable[[str], None] | None = None,
    grace: timedelta = GRACE,
) -> list[Difference]:
    """Every difference between the ledger's money group and the provider (the module docstring says
    which); an empty list when the books match. Movements and entries younger than `grace` are not listed
    one by one (they may be in flight); balances are compared as they are."""
    provider = provider or get_payment_provider()
    say = progress or (lambda message: None)
    cutoff = timezone.now() - grace  # younger movements and entries may be in flight
    differences: list[Difference] = []
    seen: set[str] = set()
    for account in _accounts(provider):
        differences += _account_differences(provider, account, since=since, cutoff=cutoff, seen=seen, say=say)
    differences += _unknown_entries(since=since, cutoff=cutoff, seen=seen, say=say)
    say(f"{len(differences)} difference(s).")
    return differences


def reconcile_and_alert(*, since: datetime | None = None) -> int:
    """The daily run (Celery `payments.reconcile`): reconcile, log each difference at ERROR (alerting
    watches ERROR), return how many."""
    differences = reconcile(since=since, progress=logger.info)
    for difference in differences:
        logger.error("reconciliation: %s", difference)
    return len(differences)


def _accounts(provider: PaymentProvider) -> Iterator[_Account]:
    yield _Account(ledger.CASH, "")
    rows = (
        PayoutAccount.objects.filter(provider=provider.name)
        .order_by("pk")
        .values_list("owner_id", "provider_account_id")
        .iterator(chunk_size=CHUNK)
    )
    for owner_id, provider_account_id in rows:
        yield _Account(ledger.connected(owner_id), provider_account_id)


def _chunks(items: Iterable, size: int = CHUNK) -> Iterator[list]:
    iterator = iter(items)
    while chunk := list(islice(iterator, size)):
        yield chunk


def _account_differences(
    provider: PaymentProvider,
    account: _Account,
    *,
    since: datetime | None,
    cutoff: datetime,
    seen: set[str],
    say: Callable[[str], None],
) -> list[Difference]:
    differences: list[Difference] = []
    outside: dict[str, Decimal] = defaultdict(Decimal)  # the platform's money the ledger does not track
    fees: dict[str, Decimal] = defaultdict(Decimal)
    count = 0
    start = since - MARGIN if since is not None else None
    movements = provider.balance_transactions(account_id=account.provider_id, created_after=start)
    for chunk in _chunks(movements):
        known = _known_refs({ref for txn in chunk for ref in (txn.source, txn.payment_id) if ref})
        refunded = _refunds_named_by_payment({txn.payment_id for txn in chunk if txn.type == "refund"} & known)
        for txn in chunk:
            count += 1
            if txn.source in known:
                seen.add(txn.source)
                fees[txn.currency] += txn.fee
            elif txn.type == "refund" and txn.payment_id in refunded:
                fees[txn.currency] += txn.fee  # booked from an event that named the payment, not the refund
            elif not account.provider_id and _outside_books(txn, known):
                outside[txn.currency] += txn.net
            elif _reportable(txn, account, since=since, cutoff=cutoff):
                differences.append(
                    Difference(
                        kind="not_in_books",
                        account=account.ledger_name,
                        currency=txn.currency,
                        provider=txn.net,
                        ref=txn.source,
                        detail=f"{txn.type} {txn.id} at {txn.created:%Y-%m-%d %H:%M} is in no ledger entry",
                    )
                )
    say(f"{account.ledger_name} {account.provider_id or '(platform)'}: {count} provider movement(s) read.")
    if account.provider_id or since is None:
        differences += _balance_differences(provider, account, outside=outside, fees=fees)
    return differences


def _known_refs(refs: set[str]) -> set[str]:
    if not refs:
        return set()
    return set(LedgerEntry.objects.filter(provider_ref__in=refs).values_list("provider_ref", flat=True))


def _refunds_named_by_payment(payment_ids: set[str]) -> set[str]:
    """The payments some refund entry names instead of the refund itself (a `charge.refunded` whose charge did
    not list its refunds): their refunds are matched by the payment, their amounts by the balances."""
    if not payment_ids:
        return set()
    entries = LedgerEntry.objects.filter(kind="refunded", provider_ref__in=payment_ids)
    return set(entries.values_list("provider_ref", flat=True))


def _outside_books(txn: BalanceTransaction, known: set[str]) -> bool:
    """A platform movement of a payment that is no task's (a subscription, a credit top-up)."""
    return txn.type in PAYMENT_TYPES and not txn.group.startswith("task:") and txn.payment_id not in known


def _reportable(txn: BalanceTransaction, account: _Account, *, since: datetime | None, cutoff: datetime) -> bool:
    if txn.created > cutoff or (since is not None and txn.created < since):
        return False
    # Stripe shows a reversal on the connected account as a refund of the transfer's payment (pyr_), which no
    # entry names: the reversal (trr_) is matched on the platform's side, the account by its balance.
    return not (account.provider_id and txn.source.startswith("pyr_"))


def _balance_differences(
    provider: PaymentProvider, account: _Account, *, outside: dict[str, Decimal], fees: dict[str, Decimal]
) -> list[Difference]:
    rows = LedgerLine.objects.filter(account=account.ledger_name).values("currency").annotate(total=Sum("amount"))
    books = {row["currency"]: row["total"] for row in rows}
    held = provider.balance(account_id=account.provider_id)
    differences = []
    for currency in sorted(set(books) | set(held)):
        ours = books.get(currency, Decimal(0))
        theirs = held.get(currency, Decimal(0)) - outside.get(currency, Decimal(0))
        if ours != theirs:
            detail = f"(the provider kept {fees[currency]} in fees)" if fees.get(currency) else ""
            differences.append(
                Difference(
                    kind="balance",
                    account=account.ledger_name,
                    currency=currency,
                    ledger=ours,
                    provider=theirs,
                    ref=account.provider_id,
                    detail=detail,
                )
            )
    return differences


def _unknown_entries(
    *, since: datetime | None, cutoff: datetime, seen: set[str], say: Callable[[str], None]
) -> list[Difference]:
    """Money entries whose provider object the provider did not list, or that name none."""
    lines = LedgerLine.objects.filter(Q(account=ledger.CASH) | Q(account__endswith=":connected"))
    lines = lines.filter(entry__created_at__lte=cutoff)
    if since is not None:
        lines = lines.filter(entry__created_at__gte=since)
    rows = (
        lines.order_by("entry_id", "id")
        .values_list("entry_id", "entry__kind", "entry__source", "entry__provider_ref", "account", "currency", "amount")
        .iterator(chunk_size=CHUNK * 2)
    )
    differences: list[Difference] = []
    last_entry = None
    count = 0
    for entry_id, kind, source, ref, account, currency, amount in rows:
        if entry_id == last_entry:
            continue  # one finding per entry, on its first money line
        last_entry, count = entry_id, count + 1
        if ref and ref in seen:
            continue
        differences.append(
            Difference(
                kind="unknown_to_provider" if ref else "no_provider_object",
                account=account,
                currency=currency,
                ledger=amount,
                ref=ref or f"entry #{entry_id}",
                detail=f"{kind} of {source}",
            )
        )
    say(f"ledger: {count} money entr{'y' if count == 1 else 'ies'} checked.")
    return differences
