"""Deploy checks of the payments configuration (settings only), registered by the payments app."""

from __future__ import annotations

import logging

from django.conf import settings
from django.core.checks import Error, register

logger = logging.getLogger(__name__)

OPT_IN = "PAYMENTS_ALLOW_LOCAL_PROVIDER_IN_PRODUCTION"


@register(deploy=True)
def check_real_payments_provider(app_configs=None, **kwargs) -> list[Error]:
    """A deployment takes real money only: the local provider settles any payment itself and its public
    checkout page credits a top-up for free, so `check --deploy` (which `make serve` runs before it
    starts) refuses it unless a demo deployment opts in by name (docs/operations.md#payments-in-production)."""
    provider = settings.PAYMENTS_PROVIDER
    if provider == "local" and not settings.PAYMENTS_ALLOW_LOCAL_PROVIDER_IN_PRODUCTION:
        return [
            Error(
                "PAYMENTS_PROVIDER is 'local': the self-settling local provider would credit payments nobody made.",
                hint=f"Set PAYMENTS_PROVIDER=stripe with STRIPE_API_KEY, or {OPT_IN}=true for a demo deployment.",
                id="payments.E001",
            )
        ]
    if provider == "stripe" and not settings.STRIPE_API_KEY:
        return [
            Error(
                "PAYMENTS_PROVIDER is 'stripe' but STRIPE_API_KEY is empty.",
                hint="Set STRIPE_API_KEY to the account's secret key.",
                id="payments.E001",
            )
        ]
    return []


def warn_if_local_payments_allowed() -> None:
    """On every start of a process: say loudly that a deployment runs the local provider on purpose."""
    if settings.PAYMENTS_ALLOW_LOCAL_PROVIDER_IN_PRODUCTION and settings.PAYMENTS_PROVIDER == "local":
        logger.warning(
            "%s=true: the local payment provider is on; every payment and top-up settles without money. "
            "For a demo deployment only.",
            OPT_IN,
        )
