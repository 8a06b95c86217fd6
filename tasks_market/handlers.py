"""Payment-provider events this app follows (registered from TasksMarketConfig.ready())."""

from __future__ import annotations

from tasks_market.services.payments import PaymentMismatch, payment_apply_failed, payment_apply_succeeded
from webhooks_app.registry import EventRejected, ProviderEvent, payment_event_handler


def _payment_id(event: ProviderEvent) -> str:
    value = event.object.get("id")
    return value if isinstance(value, str) else ""


@payment_event_handler("payment_intent.succeeded")
def on_payment_succeeded(event: ProviderEvent) -> None:
    if not (payment_id := _payment_id(event)):
        return
    amounts = {field: event.object.get(field) for field in ("amount", "amount_received") if field in event.object}
    try:
        payment_apply_succeeded(
            provider_payment_id=payment_id,
            event_id=event.id,
            amounts=amounts or {"amount": None},
            currency=event.object.get("currency"),
        )
    except PaymentMismatch as exc:  # recorded on the payment; the webhook marks the event rejected
        raise EventRejected(str(exc)) from exc


@payment_event_handler("payment_intent.payment_failed")
def on_payment_failed(event: ProviderEvent) -> None:
    if payment_id := _payment_id(event):
        payment_apply_failed(provider_payment_id=payment_id)
