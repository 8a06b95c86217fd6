from django.apps import AppConfig


class TeamsConfig(AppConfig):
    name = "teams"

    def ready(self) -> None:
        from teams import handlers  # noqa: F401  (registers the payment event handlers)
