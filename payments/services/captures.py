"""The poster's money in the ledger (docs/payouts.md#the-ledger): captured, and given back while held."""

from __future__ import annotations

from decimal import Decimal

from payments import ledger


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
