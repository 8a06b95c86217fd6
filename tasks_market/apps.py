from django.apps import AppConfig


class TasksMarketConfig(AppConfig):
    name = "tasks_market"
    verbose_name = "Task marketplace"

    def ready(self) -> None:
        from tasks_market import payment_events  # noqa: F401 - registers its payment event handlers
