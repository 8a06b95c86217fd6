"""Payments: one interface (base.py), a real local provider (the default) and Stripe over httpx.

from payments.providers import get_payment_provider
payment = get_payment_provider().create_payment(amount=Decimal("49.00"), currency="usd", metadata={...})
"""

from __future__ import annotations

from django.conf import settings

from core.http.errors import ProviderUnavailable
from payments.providers.base import (
    PaymentProvider,
    PaymentStatus,
    ProviderPayment,
    ProviderSubscription,
    SubscriptionStatus,
)
from payments.providers.local import LocalPaymentProvider
from payments.providers.stripe import StripePaymentProvider

# The names get_payment_provider knows (settings.PAYMENTS_PROVIDER), as a payment records its provider.
PROVIDERS = (LocalPaymentProvider.name, StripePaymentProvider.name)

__all__ = [
    "PROVIDERS",
    "PaymentProvider",
    "PaymentStatus",
    "ProviderPayment",
    "ProviderSubscription",
    "SubscriptionStatus",
    "get_payment_provider",
]


def get_payment_provider() -> PaymentProvider:
    """The provider named by settings.PAYMENTS_PROVIDER (`local` by default)."""
    name = settings.PAYMENTS_PROVIDER
    if name == "local":
        return LocalPaymentProvider()
    if name == "stripe":
        return StripePaymentProvider.from_settings()
    raise ProviderUnavailable(f"Unknown payment provider {name!r}.")
