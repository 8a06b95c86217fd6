"""Deploy checks of the platform's own configuration (settings only), registered by CoreConfig.ready()."""

from __future__ import annotations

from django.conf import settings
from django.core.checks import Error, Tags, register

from core.ops.metrics import bind_is_private


@register(Tags.security, deploy=True)
def check_metrics_exporter_private(app_configs=None, **kwargs) -> list[Error]:
    """The Prometheus exporters have no other guard than their address or a bearer token: on an address that
    other machines reach, `check --deploy` (which `make serve`'s release step runs) wants the token
    (docs/operations.md#prometheus-metrics). The exporter itself refuses to start the same way."""
    if settings.METRICS_TOKEN or bind_is_private(settings.METRICS_HOST):
        return []
    return [
        Error(
            f"METRICS_HOST is {settings.METRICS_HOST!r}, not a loopback address, and METRICS_TOKEN is empty: "
            "anyone who reaches the metrics ports could read them.",
            hint="Set METRICS_TOKEN (Prometheus sends it as a bearer token), or leave METRICS_HOST at 127.0.0.1.",
            id="core.E001",
        )
    ]


def local_provider_refused(*, provider: str, opt_in: str, why: str, instead: str, check_id: str) -> list[Error]:
    """The deploy check of one local stand-in (docs/operations.md#local-stand-ins-in-production): the setting
    `provider` names `local` and the setting `opt_in` is off, so a deployment would serve the stand-in."""
    if getattr(settings, provider) != "local" or getattr(settings, opt_in):
        return []
    return [
        Error(f"{provider} is 'local': {why}", hint=f"{instead}, or {opt_in}=true for a demo deployment.", id=check_id)
    ]
