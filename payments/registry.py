"""How domain apps react to money: handlers for payment-provider events, by event type, and the sources
payments are made for, by kind.

The one interface between payments and the domain apps (see docs/architecture.md#payment-events).
Each domain app keeps its handlers in its own `payment_handlers.py`, imported from its AppConfig.ready();
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
from typing import TYPE_CHECKING, Any, Protocol

if TYPE_CHECKING:
    from payments.models import Payment


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


# --- Payment sources (docs/architecture.md#payment-events). A payment pays for a source, `<kind>:<id>`
# (`task:<uuid>`), and payments.services.payments moves its money; the app that owns the kind decides what
# the money means for the source, through the object it registers here from its AppConfig.ready():
#
#     payment_source_register("task", TaskPayments())
#
# Every call is made inside the transaction that changes the payment, after `lock` (the source's row
# first, then the payment's: the order every writer of both takes them in).


class PaymentSource(Protocol):
    def lock(self, source_id: str) -> None:
        """Lock the source's row for the rest of the caller's transaction (a missing row: nothing to lock)."""

    def awaits(self, payment: Payment) -> bool:
        """Whether the source still waits for this payment's money: False has it refunded."""

    def succeeded(self, payment: Payment) -> None:
        """The money of a payment the source awaited is secured."""

    def failed(self, payment: Payment) -> None:
        """The payment failed before any money moved."""

    def cancelled(self, payment: Payment) -> None:
        """A held payment's authorisation expired before it was captured: the money is gone."""

    def refunded(self, payment: Payment) -> None:
        """All of a secured payment went back to the payer at the provider (its dashboard, or a refund of ours)."""

    def staff_refund(self, payment: Payment, staff_user: Any) -> None:
        """Staff asked for the payment's refund in the admin: the source decides how (for a task, a dispute's
        full refund, or a refund after release), raising core.http.errors.DomainError when it cannot be."""


_sources: dict[str, PaymentSource] = {}


def payment_source_register(kind: str, source: PaymentSource) -> None:
    _sources[kind] = source


def payment_source(source: str) -> PaymentSource:
    """The registered source of `<kind>:<id>`; a kind nobody registered is a programming error."""
    kind = source.partition(":")[0]
    try:
        return _sources[kind]
    except KeyError:
        raise LookupError(f"no payment source is registered for {kind!r} ({source})") from None
