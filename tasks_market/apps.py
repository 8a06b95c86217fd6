from django.apps import AppConfig


class TasksMarketConfig(AppConfig):
    name = "tasks_market"
    verbose_name = "Task marketplace"

    def ready(self) -> None:
        from tasks_market import handlers  # noqa: F401 - registers the payment event handlers
