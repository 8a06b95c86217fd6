"""The poster's money in the ledger (docs/payouts.md#the-ledger): captured, and given back while held."""

from __future__ import annotations

from decimal import Decimal

from payments import ledger


def ledger_captured(*, source: str, currency: str, amount: Decimal, provider_ref: str = "") -> None:
    """The poster's payment for `source` was captured: the platform holds it, in its balance at the provider."""
    ledger.ledger_post(
        kind="captured",
        source=source,
        key=f"captured:{source}",
        currency=currency,
        lines=[(ledger.CAPTURED, amount), (ledger.HELD, -amount), (ledger.CASH, amount), (ledger.OUTSIDE, -amount)],
        provider_ref=provider_ref,
    )


def ledger_refunded(*, source: str, currency: str, amount: Decimal, key: str, provider_ref: str = "") -> None:
    """Held money for `source` went back to the poster (a dispute's refund), out of the platform's balance."""
    ledger.ledger_post(
        kind="refunded",
        source=source,
        key=f"refunded:{key}",
        currency=currency,
        lines=[(ledger.HELD, amount), (ledger.REFUNDS, -amount), (ledger.OUTSIDE, amount), (ledger.CASH, -amount)],
        provider_ref=provider_ref,
    )
