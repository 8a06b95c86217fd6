"""The local provider's balances (payments.models.LocalBalanceTransaction): the platform's (`account` "")
and each connected account's, as Stripe keeps them, one row per movement.

The provider writes a row in the same transaction as the object that moved the money (payments.providers.
local), so a balance is exactly the sum of what moved, and refuses what a real provider refuses: a
transfer larger than the platform's balance in that currency, a payout or a reversal larger than the
connected account's. The reconciliation (payments.reconcile) reads them through the provider interface
(`balance`, `balance_transactions`), as it reads Stripe's.
"""

from __future__ import annotations

from collections.abc import Iterator
from datetime import UTC, datetime
from decimal import Decimal

from django.db.models import Q, Sum

from core.http.errors import ProviderError
from payments.models import LocalBalanceTransaction, LocalConnectObject, LocalPayment
from payments.money import from_minor
from payments.provider_events import provider_id
from payments.providers.base import BalanceTransaction

PAGE = 500


def payment_group(payment: LocalPayment) -> str:
    """The transfer group of a payment's money: `task:<id>` for a task's payment, "" for any other."""
    task_id = (payment.metadata or {}).get("task_id")
    return f"task:{task_id}" if task_id else ""


def book(
    *, account: str, type: str, amount_minor: int, currency: str, source: str, fee_minor: int = 0, group: str = ""
) -> LocalBalanceTransaction:
    """One movement of `account`'s balance (in the caller's transaction): `amount_minor` signed, the fee
    the provider kept on top, net = amount - fee."""
    return LocalBalanceTransaction.objects.create(
        id=provider_id("txn"),
        account=account,
        type=type,
        amount_minor=amount_minor,
        fee_minor=fee_minor,
        net_minor=amount_minor - fee_minor,
        currency=currency,
        source=source,
        group=group,
    )


def balance_minor(account: str, currency: str) -> int:
    found = LocalBalanceTransaction.objects.filter(account=account, currency=currency).aggregate(total=Sum("net_minor"))
    return int(found["total"] or 0)


def require_funds(account: str, currency: str, minor: int, *, what: str) -> None:
    """Refuse a movement out of `account` larger than its balance, as a real provider does."""
    held = balance_minor(account, currency)
    if minor > held:
        whose = "the platform's balance" if not account else f"account {account}'s balance"
        raise ProviderError(
            f"Insufficient funds: {what} of {from_minor(minor, currency)} {currency.upper()} exceeds "
            f"{whose} ({from_minor(held, currency)})."
        )


def balance(account: str) -> dict[str, Decimal]:
    rows = LocalBalanceTransaction.objects.filter(account=account).values("currency").annotate(total=Sum("net_minor"))
    return {row["currency"]: from_minor(row["total"], row["currency"]) for row in rows}


def transactions(account: str, created_after: datetime | None = None) -> Iterator[BalanceTransaction]:
    """`account`'s movements oldest first, a page of PAGE rows at a time (keyset on created_at, id)."""
    rows = LocalBalanceTransaction.objects.filter(account=account).order_by("created_at", "id")
    if created_after is not None:
        rows = rows.filter(created_at__gte=created_after)
    after: tuple[datetime, str] | None = None
    while True:
        page = rows
        if after is not None:
            page = rows.filter(Q(created_at__gt=after[0]) | Q(created_at=after[0], id__gt=after[1]))
        chunk = list(page[:PAGE])
        # A refund names its payment, as Stripe's refund does (the reconciliation matches a refund booked
        # from an event that named only the payment by it).
        refunds = dict(
            LocalConnectObject.objects.filter(
                kind=LocalConnectObject.Kind.REFUND, id__in=[row.source for row in chunk if row.type == "refund"]
            ).values_list("id", "target_id")
        )
        for row in chunk:
            yield to_balance_transaction(row, payment_id=refunds.get(row.source, ""))
        if len(chunk) < PAGE:
            return
        after = (chunk[-1].created_at, chunk[-1].id)


def to_balance_transaction(row: LocalBalanceTransaction, *, payment_id: str = "") -> BalanceTransaction:
    return BalanceTransaction(
        id=row.id,
        type=row.type,
        amount=from_minor(row.amount_minor, row.currency),
        fee=from_minor(row.fee_minor, row.currency),
        net=from_minor(row.net_minor, row.currency),
        currency=row.currency,
        source=row.source,
        created=row.created_at.astimezone(UTC),
        group=row.group,
        payment_id=payment_id,
    )


def event_object(row: LocalBalanceTransaction) -> dict:
    """A balance transaction as Stripe lists it in an event (minor units)."""
    return {
        "id": row.id,
        "object": "balance_transaction",
        "amount": row.amount_minor,
        "fee": row.fee_minor,
        "net": row.net_minor,
        "currency": row.currency,
        "type": row.type,
        "source": row.source,
        "created": int(row.created_at.timestamp()),
    }
