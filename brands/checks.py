"""Deploy checks of the brands' providers (settings only), registered from BrandsConfig.ready()."""

from __future__ import annotations

from django.conf import settings
from django.core.checks import Error, register

OPT_IN = "PUBLISHING_ALLOW_LOCAL_PROVIDER_IN_PRODUCTION"


@register(deploy=True)
def check_real_publishing_provider(app_configs=None, **kwargs) -> list[Error]:
    """A deployment publishes for real: the local publisher posts nowhere (its publications end
    `simulated`), so `check --deploy` refuses it unless a demo deployment opts in by name
    (docs/operations.md#local-stand-ins-in-production)."""
    if settings.PUBLISHING_PROVIDER == "local" and not settings.PUBLISHING_ALLOW_LOCAL_PROVIDER_IN_PRODUCTION:
        return [
            Error(
                "PUBLISHING_PROVIDER is 'local': publications would end `simulated`, reaching no platform.",
                hint=f"{OPT_IN}=true for a demo deployment (no platform provider is built in yet).",
                id="brands.E001",
            )
        ]
    return []
