"""Handlers of the payment provider's events for credit top-ups (registered from AssistantConfig.ready()).

A top-up is paid when its intent succeeds (Stripe captures top-ups at once). With Stripe Checkout
the top-up first knows only its session (`cs_...`); the intent is linked from
`checkout.session.completed` or from the first `payment_intent.*` event, whichever comes first.
"""

from __future__ import annotations

from assistant.services import (
    TopUpMismatch,
    credit_top_up_apply_failed,
    credit_top_up_apply_succeeded,
    credit_top_up_link_intent,
)
from payments.registry import EventRejected, ProviderEvent, payment_event_handler

KIND = "credit_top_up"  # metadata["kind"] of a top-up's payment


def _top_up_metadata(event: ProviderEvent) -> dict | None:
    metadata = event.object.get("metadata")
    if not isinstance(metadata, dict) or metadata.get("kind") != KIND:
        return None  # another app's payment
    return metadata


def _top_up_payment_id(event: ProviderEvent) -> str:
    metadata = _top_up_metadata(event)
    value = event.object.get("id")
    if metadata is None or not isinstance(value, str):
        return ""
    credit_top_up_link_intent(payment_intent_id=value, top_up_id=metadata.get("top_up_id"))
    return value


@payment_event_handler("payment_intent.succeeded")
def on_top_up_succeeded(event: ProviderEvent) -> None:
    if not (payment_id := _top_up_payment_id(event)):
        return
    amounts = {field: event.object.get(field) for field in ("amount", "amount_received") if field in event.object}
    try:
        credit_top_up_apply_succeeded(
            provider_payment_id=payment_id, amounts=amounts or {"amount": None}, currency=event.object.get("currency")
        )
    except TopUpMismatch as exc:  # nothing credited; the webhook marks the event rejected
        raise EventRejected(str(exc)) from exc


@payment_event_handler("payment_intent.payment_failed")
def on_top_up_failed(event: ProviderEvent) -> None:
    if payment_id := _top_up_payment_id(event):
        credit_top_up_apply_failed(provider_payment_id=payment_id)


@payment_event_handler("checkout.session.expired")
def on_top_up_checkout_expired(event: ProviderEvent) -> None:
    """The checkout page expired unpaid: the top-up failed (nothing was credited)."""
    session_id = event.object.get("id")
    if _top_up_metadata(event) is not None and isinstance(session_id, str) and session_id:
        credit_top_up_apply_failed(provider_payment_id=session_id)


@payment_event_handler("checkout.session.completed")
def on_top_up_checkout_completed(event: ProviderEvent) -> None:
    session_id, intent_id = event.object.get("id"), event.object.get("payment_intent")
    if isinstance(intent_id, dict):
        intent_id = intent_id.get("id")
    if _top_up_metadata(event) is not None and isinstance(session_id, str) and isinstance(intent_id, str):
        credit_top_up_link_intent(payment_intent_id=intent_id, session_id=session_id)
