from django.apps import AppConfig


class WebhooksAppConfig(AppConfig):
    name = "webhooks_app"
    verbose_name = "Webhooks"

    def ready(self) -> None:
        from core.retention import log_pruner_register
        from webhooks_app.retention import webhook_logs_prune

        log_pruner_register(webhook_logs_prune)
