"""Payments: one interface (base.py), a real local provider (the default) and Stripe over httpx.

from payments.providers import get_payment_provider
payment = get_payment_provider().create_payment(amount=Decimal("49.00"), currency="usd", metadata={...})
"""

from __future__ import annotations

from django.conf import settings

from core.errors import ProviderUnavailable
from payments.providers.base import Payment, PaymentProvider, PaymentStatus, Subscription, SubscriptionStatus

__all__ = [
    "Payment",
    "PaymentProvider",
    "PaymentStatus",
    "Subscription",
    "SubscriptionStatus",
    "get_payment_provider",
]


def get_payment_provider() -> PaymentProvider:
    """The provider named by settings.PAYMENTS_PROVIDER (`local` by default)."""
    name = settings.PAYMENTS_PROVIDER
    if name == "local":
        from payments.providers.local import LocalPaymentProvider

        return LocalPaymentProvider()
    if name == "stripe":
        from payments.providers.stripe import StripePaymentProvider

        return StripePaymentProvider.from_settings()
    raise ProviderUnavailable(f"Unknown payment provider {name!r}.")
