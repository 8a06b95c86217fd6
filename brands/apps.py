from django.apps import AppConfig


class BrandsConfig(AppConfig):
    name = "brands"

    def ready(self) -> None:
        from brands import signals

        signals.connect()
