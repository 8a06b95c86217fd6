"""The platform fee (docs/payouts.md#the-fee): one function, so every response and every ledger entry
agree on it."""

from __future__ import annotations

from dataclasses import dataclass
from decimal import ROUND_HALF_UP, Decimal

from django.conf import settings

from payments.money import exponent


@dataclass(frozen=True)
class FeeSplit:
    amount: Decimal  # what the poster pays
    fee: Decimal  # the platform's
    net: Decimal  # the seller's: amount - fee


def quantum(currency: str) -> Decimal:
    return Decimal(1).scaleb(-exponent(currency))


def fee_split(*, amount: Decimal, currency: str) -> FeeSplit:
    """`PLATFORM_FEE_PERCENT` of `amount`, rounded half-up to the currency's minor unit, at least
    `PLATFORM_FEE_MINIMUM`, never more than the amount; the seller's net is the rest, so amount = fee + net
    to the last minor unit."""
    unit = quantum(currency)
    amount = Decimal(amount).quantize(unit)
    fee = (amount * Decimal(settings.PLATFORM_FEE_PERCENT) / 100).quantize(unit, rounding=ROUND_HALF_UP)
    fee = min(max(fee, Decimal(settings.PLATFORM_FEE_MINIMUM).quantize(unit, rounding=ROUND_HALF_UP)), amount)
    return FeeSplit(amount=amount, fee=fee, net=amount - fee)
