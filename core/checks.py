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
