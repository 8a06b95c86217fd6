"""The platform fee: one rule (docs/payouts.md#the-fee)."""

from __future__ import annotations

from decimal import Decimal

import pytest

from payments.fees import fee_split


@pytest.mark.parametrize(
    ("amount", "currency", "percent", "minimum", "fee", "net"),
    [
        ("150.00", "usd", "10", "0", "15.00", "135.00"),
        ("0.05", "usd", "10", "0", "0.01", "0.04"),  # 0.005 rounds half up
        ("0.04", "usd", "10", "0", "0.00", "0.04"),
        ("10.00", "usd", "10", "2.00", "2.00", "8.00"),  # the minimum
        ("1.00", "usd", "10", "2.00", "1.00", "0.00"),  # never more than the amount
        ("1005", "jpy", "10", "0", "101", "904"),  # 100.5 yen rounds half up to whole yen
        ("1.005", "kwd", "10", "0", "0.101", "0.904"),
    ],
)
def test_fee_rounds_half_up_to_minor_units_and_net_is_the_rest(settings, amount, currency, percent, minimum, fee, net):
    settings.PLATFORM_FEE_PERCENT, settings.PLATFORM_FEE_MINIMUM = Decimal(percent), Decimal(minimum)

    split = fee_split(amount=Decimal(amount), currency=currency)

    assert (split.fee, split.net) == (Decimal(fee), Decimal(net))
    assert split.fee + split.net == split.amount
