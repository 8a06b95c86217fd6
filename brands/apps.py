from django.apps import AppConfig


class BrandsConfig(AppConfig):
    name = "brands"

    def ready(self) -> None:
        from brands import checks, signals  # noqa: F401 - checks registers the deploy check

        signals.connect()
