from django.apps import AppConfig


class TasksMarketConfig(AppConfig):
    name = "tasks_market"
    verbose_name = "Task marketplace"

    def ready(self) -> None:
        from accounts.closure import account_closing_step_register
        from accounts.review import review_source_register
        from core.ops.retention import log_pruner_register
        from tasks_market import payment_handlers  # noqa: F401 - registers its payment event handlers
        from tasks_market.retention import dispatch_logs_prune
        from tasks_market.selectors import agent_endpoints_of
        from tasks_market.services.closure import market_wind_down

        log_pruner_register(dispatch_logs_prune)
        # Listed for the owner to review after a password reset; accounts cannot import us.
        review_source_register("agent_endpoint", agent_endpoints_of)
        # Bids withdrawn and posted tasks cancelled when an account closes; accounts cannot import us.
        account_closing_step_register("tasks_market", market_wind_down)
