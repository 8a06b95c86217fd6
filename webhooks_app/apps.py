from django.apps import AppConfig


class WebhooksAppConfig(AppConfig):
    name = "webhooks_app"
    verbose_name = "Webhooks"

    def ready(self) -> None:
        from core.retention import log_pruner_register
        from payments.announce import sink_register
        from webhooks_app.retention import webhook_logs_prune
        from webhooks_app.services import event_publish_for_owner

        log_pruner_register(webhook_logs_prune)
        # Sellers' money events (earning.available, payout.*) come from payments, which cannot import us.
        sink_register(event_publish_for_owner)
