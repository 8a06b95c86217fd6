"""The platform fee (docs/payouts.md#the-fee): one function, so every response and every ledger entry
agree on it. The terms (percent, minimum) are read from settings when a bid is shown and pinned on the
payment when it is selected, so a settings change never rewrites an accepted deal
(docs/decisions.md#the-fee-is-pinned-at-selection)."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from decimal import ROUND_HALF_UP, Decimal, InvalidOperation
from functools import lru_cache

from django.conf import settings
from django.core.exceptions import ImproperlyConfigured

from payments.money import exponent


@dataclass(frozen=True)
class FeeSplit:
    amount: Decimal  # what the poster pays
    fee: Decimal  # the platform's
    net: Decimal  # the seller's: amount - fee


@dataclass(frozen=True)
class FeeTerms:
    """The rule's inputs for one currency: what a payment pins at selection."""

    percent: Decimal
    minimum: Decimal


def quantum(currency: str) -> Decimal:
    return Decimal(1).scaleb(-exponent(currency))


@lru_cache(maxsize=8)
def _parsed(raw: str) -> tuple[Decimal | None, dict[str, Decimal]]:
    """`PLATFORM_FEE_MINIMUM` as text: one number (every currency, the setting's old form) or
    `usd=0.50,eur=0.50,jpy=50` (per currency; a currency not named has none)."""
    text = raw.strip()
    try:
        if "=" not in text:
            return Decimal(text or "0"), {}
        pairs = (item.split("=", 1) for item in text.split(",") if item.strip())
        return None, {code.strip().lower(): Decimal(value.strip()) for code, value in pairs}
    except (InvalidOperation, ValueError):
        raise ImproperlyConfigured(
            "PLATFORM_FEE_MINIMUM must be a decimal number or pairs such as usd=0.50,jpy=50"
        ) from None


def fee_minimum(currency: str) -> Decimal:
    """The fee's minimum in `currency`'s major units (docs/decisions.md#fee-minimum-per-currency).

    The setting is a mapping (currency → amount; also as the text `usd=0.50,jpy=50`), where a currency not
    named has no minimum, or one number, which keeps its old meaning: the same minimum in every currency."""
    value = settings.PLATFORM_FEE_MINIMUM
    code = currency.strip().lower()
    if isinstance(value, Mapping):
        found = {str(k).lower(): v for k, v in value.items()}.get(code, 0)
        return Decimal(str(found))
    default, per_currency = _parsed(str(value))
    return per_currency.get(code, Decimal(0)) if default is None else default


def fee_terms(currency: str) -> FeeTerms:
    """Today's terms for `currency`, from settings: what a selection pins."""
    return FeeTerms(percent=Decimal(settings.PLATFORM_FEE_PERCENT), minimum=fee_minimum(currency))


def fee_split(*, amount: Decimal, currency: str, terms: FeeTerms | None = None) -> FeeSplit:
    """`percent` of `amount`, rounded half-up to the currency's minor unit, at least `minimum`, never more
    than the amount; the seller's net is the rest, so amount = fee + net to the last minor unit. `terms`:
    the ones a payment pinned; today's settings when not given."""
    terms = terms or fee_terms(currency)
    unit = quantum(currency)
    amount = Decimal(amount).quantize(unit)
    fee = (amount * terms.percent / 100).quantize(unit, rounding=ROUND_HALF_UP)
    fee = min(max(fee, Decimal(terms.minimum).quantize(unit, rounding=ROUND_HALF_UP)), amount)
    return FeeSplit(amount=amount, fee=fee, net=amount - fee)
