from django.apps import AppConfig


class CoreConfig(AppConfig):
    name = "core"
    verbose_name = "Platform"

    def ready(self) -> None:
        from django.urls import register_converter

        # signals: connects the receivers; checks: registers the deploy checks.
        from core import checks, signals  # noqa: F401
        from core.api.converters import LenientUUIDConverter
        from core.ops import metrics, observability

        # `<uid:name>`: a UUID path parameter that is a 422, not a 404, when malformed.
        register_converter(LenientUUIDConverter, "uid")

        # Prometheus timings when metrics are on; traces and error reports when configured
        # (docs/operations.md#metrics-and-traces). Before the WSGI handler loads its middleware.
        if metrics.ENABLED:
            metrics.install()
        observability.setup()
