from django.apps import AppConfig


class WebhooksAppConfig(AppConfig):
    name = "webhooks_app"
