from django.apps import AppConfig


class TasksMarketConfig(AppConfig):
    name = "tasks_market"
    verbose_name = "Task marketplace"

    def ready(self) -> None:
        from core.retention import log_pruner_register
        from tasks_market import payment_events  # noqa: F401 - registers its payment event handlers
        from tasks_market.retention import dispatch_logs_prune

        log_pruner_register(dispatch_logs_prune)
