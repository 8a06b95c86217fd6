"""Payment-provider events for credit top-ups (registered from AssistantConfig.ready())."""

from __future__ import annotations

from assistant.services import credit_top_up_apply_failed, credit_top_up_apply_succeeded
from webhooks_app.registry import ProviderEvent, payment_event_handler

KIND = "credit_top_up"  # metadata["kind"] of a top-up's payment


def _top_up_payment_id(event: ProviderEvent) -> str:
    metadata = event.object.get("metadata")
    if not isinstance(metadata, dict) or metadata.get("kind") != KIND:
        return ""  # another app's payment
    value = event.object.get("id")
    return value if isinstance(value, str) else ""


@payment_event_handler("payment_intent.succeeded")
def on_top_up_succeeded(event: ProviderEvent) -> None:
    if payment_id := _top_up_payment_id(event):
        credit_top_up_apply_succeeded(provider_payment_id=payment_id)


@payment_event_handler("payment_intent.payment_failed")
def on_top_up_failed(event: ProviderEvent) -> None:
    if payment_id := _top_up_payment_id(event):
        credit_top_up_apply_failed(provider_payment_id=payment_id)
