from django.apps import AppConfig


class TeamsConfig(AppConfig):
    name = "teams"

    def ready(self) -> None:
        from teams import payment_events  # noqa: F401 - registers its payment event handlers
