from django.apps import AppConfig


class CoreConfig(AppConfig):
    name = "core"
    verbose_name = "Platform"

    def ready(self) -> None:
        from django.urls import register_converter

        from config import checks
        from core.api.converters import LenientUUIDConverter

        # `<uid:name>`: a UUID path parameter that is a 422, not a 404, when malformed.
        register_converter(LenientUUIDConverter, "uid")
        # Registers the deployment checks; a deployment that runs the local payment provider on
        # purpose says so in its log on every start.
        checks.warn_if_local_payments_allowed()
