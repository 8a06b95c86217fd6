"""Major units (Decimal("49.00")) to a provider's minor units (4900) and back, per currency.

The one table of minor units (`exponent`): bid and budget validation, rendering, the fee and both
providers read it (docs/decisions.md#one-decimal-policy-per-currency)."""

from __future__ import annotations

import re
from decimal import Decimal

from core.http.errors import ProviderError

# Stripe's lists: https://docs.stripe.com/currencies#zero-decimal and #three-decimal
ZERO_DECIMAL = frozenset(
    {"bif", "clp", "djf", "gnf", "jpy", "kmf", "krw", "mga", "pyg", "rwf", "ugx", "vnd", "vuv", "xaf", "xof", "xpf"}
)
THREE_DECIMAL = frozenset({"bhd", "jod", "kwd", "omr", "tnd"})
_CURRENCY = re.compile(r"^[a-z]{3}$")


def normalise_currency(currency: str) -> str:
    code = (currency or "").strip().lower()
    if not _CURRENCY.match(code):
        raise ProviderError(f"{currency!r} is not an ISO 4217 currency code.")
    return code


def exponent(currency: str) -> int:
    code = normalise_currency(currency)
    if code in ZERO_DECIMAL:
        return 0
    if code in THREE_DECIMAL:
        return 3
    return 2


def places_problem(amount: Decimal, currency: str) -> str:
    """What is wrong with `amount`'s decimals for `currency` (more than its minor units), in words; ""
    when nothing is. Validation asks this so a provider never refuses an amount we accepted."""
    places = exponent(currency)
    if Decimal(amount).scaleb(places) == Decimal(amount).scaleb(places).to_integral_value():
        return ""
    if places == 0:
        return f"Amounts in {currency.upper()} have no decimals."
    return f"Amounts in {currency.upper()} have at most {places} decimals."


def to_minor(amount: Decimal, currency: str) -> int:
    """Decimal("49.00"), "usd" → 4900. A positive amount with no more decimals than the currency has."""
    places = exponent(currency)
    minor = Decimal(amount).scaleb(places)
    if minor != minor.to_integral_value() or minor <= 0:
        raise ProviderError(f"{amount} is not a valid positive amount in {currency.upper()}.")
    return int(minor)


def from_minor(minor: int, currency: str) -> Decimal:
    """4900, "usd" → Decimal("49.00")."""
    places = exponent(currency)
    return (Decimal(int(minor)).scaleb(-places)).quantize(Decimal(1).scaleb(-places))


def event_money_mismatch(
    amount: Decimal, currency: str, event_amounts: dict[str, object], event_currency: object
) -> str:
    """Why a provider event's money (its minor-unit `event_amounts` by field, and its currency) is not
    `amount` `currency`, in words; "" when it is. An event must match exactly to be applied."""
    try:
        expected = to_minor(amount, currency)
        ours = normalise_currency(currency)
    except ProviderError:
        return f"The record's own amount {amount} {currency!r} cannot be compared."
    theirs = event_currency.strip().lower() if isinstance(event_currency, str) else None
    if theirs != ours:
        return f"Currency {event_currency!r} in the event, {ours!r} expected."
    for field, value in event_amounts.items():
        if not isinstance(value, int) or isinstance(value, bool) or value != expected:
            return f"{field} {value!r} ({theirs}, minor units) in the event, {expected} expected."
    return ""
