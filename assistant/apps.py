from django.apps import AppConfig


class AssistantConfig(AppConfig):
    name = "assistant"

    def ready(self) -> None:
        from assistant import payment_handlers  # noqa: F401 - registers the credit top-up payment event handlers
