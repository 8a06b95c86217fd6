from django.apps import AppConfig


class AssistantConfig(AppConfig):
    name = "assistant"
