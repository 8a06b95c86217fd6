from django.apps import AppConfig


class WebhooksAppConfig(AppConfig):
    name = "webhooks_app"
    verbose_name = "Webhooks"

    def ready(self) -> None:
        from accounts.closure import account_closing_step_register
        from accounts.review import review_source_register
        from core.ops.retention import log_pruner_register
        from payments.announcements import sink_register
        from webhooks_app.retention import webhook_logs_prune
        from webhooks_app.selectors import subscription_urls_of
        from webhooks_app.services import event_publish_for_owner, webhook_subscriptions_wind_down

        log_pruner_register(webhook_logs_prune)
        # Sellers' money events (earning.available, payout.*) come from payments, which cannot import us.
        sink_register(event_publish_for_owner)
        # Listed for the owner to review after a password reset; accounts cannot import us.
        review_source_register("webhook_subscription", subscription_urls_of)
        # Disabled when the account closes; accounts cannot import us.
        account_closing_step_register("webhook_subscriptions", webhook_subscriptions_wind_down)
