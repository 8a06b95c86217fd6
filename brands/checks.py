"""Deploy checks of the brands' providers (settings only), registered from BrandsConfig.ready()."""

from __future__ import annotations

from django.core.checks import Error, register

from core.checks import local_provider_refused


@register(deploy=True)
def check_real_publishing_provider(app_configs=None, **kwargs) -> list[Error]:
    """The local publisher posts nowhere (its publications end `simulated`): `check --deploy` refuses it
    unless a demo deployment opts in by name."""
    return local_provider_refused(
        provider="PUBLISHING_PROVIDER",
        opt_in="PUBLISHING_ALLOW_LOCAL_PROVIDER_IN_PRODUCTION",
        why="publications would end `simulated`, reaching no platform.",
        instead="Connect a platform provider (none is built in yet)",
        check_id="brands.E001",
    )


@register(deploy=True)
def check_real_seo_provider(app_configs=None, **kwargs) -> list[Error]:
    """The local SEO provider guesses competitors from the links of one page: `check --deploy` refuses it
    unless a demo deployment opts in by name (docs/decisions.md#competitor-discovery)."""
    return local_provider_refused(
        provider="SEO_PROVIDER",
        opt_in="SEO_ALLOW_LOCAL_PROVIDER_IN_PRODUCTION",
        why="competitor discovery would only read the links of the brand's own website.",
        instead="Set SEO_PROVIDER=dataforseo with DATAFORSEO_LOGIN and DATAFORSEO_PASSWORD",
        check_id="brands.E002",
    )


@register(deploy=True)
def check_real_social_oauth_provider(app_configs=None, **kwargs) -> list[Error]:
    """The local OAuth stand-in connects simulated accounts that post nowhere: `check --deploy` refuses it unless
    a demo deployment opts in by name (docs/decisions.md#connecting-accounts-oauth)."""
    return local_provider_refused(
        provider="SOCIAL_OAUTH_PROVIDER",
        opt_in="SOCIAL_OAUTH_ALLOW_LOCAL_PROVIDER_IN_PRODUCTION",
        why="connecting an account would connect a simulated one that reaches no platform.",
        instead="Set SOCIAL_OAUTH_PROVIDER=platforms with META_APP_ID/META_APP_SECRET and "
        "LINKEDIN_CLIENT_ID/LINKEDIN_CLIENT_SECRET",
        check_id="brands.E003",
    )
