from django.apps import AppConfig


class CoreConfig(AppConfig):
    name = "core"
    verbose_name = "Platform"

    def ready(self) -> None:
        from django.urls import register_converter

        from core import signals  # noqa: F401  (connects the receivers)
        from core.api.converters import LenientUUIDConverter

        # `<uid:name>`: a UUID path parameter that is a 422, not a 404, when malformed.
        register_converter(LenientUUIDConverter, "uid")
