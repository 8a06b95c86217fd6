"""How domain apps react to settled payments: handlers for payment-provider events, by event type.

The one interface between payments and the domain apps (see docs/architecture.md#payment-events).
Each domain app keeps its handlers in its own `payment_events.py`, imported from its AppConfig.ready();
payments never imports a domain app, and the webhook intake (webhooks_app.inbound) runs whatever
registered for an event's type:

    from payments.registry import ProviderEvent, payment_event_handler

    @payment_event_handler("payment_intent.succeeded")
    def on_payment_succeeded(event: ProviderEvent) -> None: ...

A type may have several handlers; they run in registration order inside the one transaction that
marks the event applied, so an exception in any of them rolls all of them back, answers the
provider 500 and leaves the event `failed` for a retry. Raise only for what a retry can fix; an
event that needs nothing done should simply return.

An authentic event that must not be applied (its amount does not match our record of the payment,
say) is refused by raising `EventRejected(reason)` once the handler has recorded whatever it wants
kept: what the handlers wrote stays, the remaining handlers do not run, the event is marked
`rejected` with the reason (never retried: a re-delivery is a `duplicate`), logged at ERROR, and
the provider is answered 200 `{"status": "rejected"}` (the delivery was received and handled by
refusing it; a 5xx would only make the provider send the same refused event again).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from datetime import datetime
from typing import Any


@dataclass(frozen=True)
class ProviderEvent:
    id: str  # the provider's event id, "evt_..."
    type: str  # e.g. "payment_intent.succeeded"
    created: datetime  # aware, UTC: when the provider created the event
    object: dict[str, Any] = field(default_factory=dict)  # data.object
    account: str = ""  # the connected account an event happened on (Stripe Connect: "acct_..."), else ""


Handler = Callable[[ProviderEvent], None]


class EventRejected(Exception):
    """Raised by a handler that refuses an authentic event; str(exc) is the reason, kept on the event."""


_handlers: dict[str, list[Handler]] = {}


def register(event_type: str, handler: Handler) -> Handler:
    """Add a handler for a type. Registering the same function twice for a type is a no-op."""
    handlers = _handlers.setdefault(event_type, [])
    if handler not in handlers:
        handlers.append(handler)
    return handler


def unregister(event_type: str, handler: Handler) -> None:
    handlers = _handlers.get(event_type, [])
    if handler in handlers:
        handlers.remove(handler)
    if not handlers:
        _handlers.pop(event_type, None)


def payment_event_handler(*event_types: str) -> Callable[[Handler], Handler]:
    """Decorator form of `register`, for one or more types."""

    def decorate(handler: Handler) -> Handler:
        for event_type in event_types:
            register(event_type, handler)
        return handler

    return decorate


def handlers_for(event_type: str) -> list[Handler]:
    return list(_handlers.get(event_type, ()))


def registered_types() -> list[str]:
    return sorted(_handlers)
