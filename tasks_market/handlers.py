"""Payment-provider events this app follows (registered from TasksMarketConfig.ready())."""

from __future__ import annotations

from tasks_market.services.payments import payment_apply_failed, payment_apply_succeeded
from webhooks_app.registry import ProviderEvent, payment_event_handler


def _payment_id(event: ProviderEvent) -> str:
    value = event.object.get("id")
    return value if isinstance(value, str) else ""


@payment_event_handler("payment_intent.succeeded")
def on_payment_succeeded(event: ProviderEvent) -> None:
    if payment_id := _payment_id(event):
        payment_apply_succeeded(provider_payment_id=payment_id)


@payment_event_handler("payment_intent.payment_failed")
def on_payment_failed(event: ProviderEvent) -> None:
    if payment_id := _payment_id(event):
        payment_apply_failed(provider_payment_id=payment_id)
