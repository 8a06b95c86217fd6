"""A Stripe stand-in on 127.0.0.1 that honours `Idempotency-Key` as Stripe does, for the Stripe adapter.

It creates Checkout Sessions (a payment session makes its payment intent, a subscription session its
subscription, as if the customer paid at once), payment intents, customers, subscriptions and refunds,
reads sessions and intents, cancels and captures intents (a second cancel or capture is refused, as
Stripe does), updates subscriptions, replays the first
answer for a key it has seen, records every request (path and key), and can be told to fail the next
POSTs (a failure is not remembered for its key, as when Stripe fails before it starts executing) or to
hold them until the test lets them go (to look at the database while the provider is being asked).
"""

from __future__ import annotations

import json
import secrets
import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler
from urllib.parse import parse_qsl

from tests.support.servers import serve_http


@dataclass
class StripeState:
    requests: list[tuple[str, str, str | None]] = field(default_factory=list)  # (method, path, Idempotency-Key)
    answers: dict[str, tuple[int, dict]] = field(default_factory=dict)  # by Idempotency-Key
    subscriptions: dict[str, dict] = field(default_factory=dict)  # by id
    sessions: dict[str, dict] = field(default_factory=dict)  # Checkout Sessions by id
    intents: dict[str, dict] = field(default_factory=dict)  # PaymentIntents by id
    fail_next: list[int] = field(default_factory=list)  # statuses for the next POSTs (not remembered for a key)
    hold: threading.Event | None = None  # POSTs wait until it is set
    held: threading.Event = field(default_factory=threading.Event)  # set once a create is waiting
    lock: threading.Lock = field(default_factory=threading.Lock)

    def keys(self, path: str) -> list[str | None]:
        with self.lock:
            return [key for method, p, key in self.requests if method == "POST" and p == path]

    def objects_created(self, path: str) -> int:
        """How many distinct objects a create path made (replays of a key make none)."""
        with self.lock:
            return len({key for key, (status, body) in self.answers.items() if status == 200 and body["_path"] == path})


def _intent(form: dict[str, str]) -> dict:
    intent_id = f"pi_{secrets.token_hex(12)}"
    return {
        "id": intent_id,
        "object": "payment_intent",
        "amount": int(form["amount"]),
        "currency": form["currency"],
        "status": "requires_payment_method",
        "capture_method": "manual",
        "client_secret": f"{intent_id}_secret_{secrets.token_hex(8)}",
        "metadata": {k[9:-1]: v for k, v in form.items() if k.startswith("metadata[")},
        "last_payment_error": None,
    }


def _subscription(form: dict[str, str]) -> dict:
    return {
        "id": f"sub_{secrets.token_hex(12)}",
        "object": "subscription",
        "status": "active",
        "cancel_at_period_end": False,
        "current_period_end": int(time.time()) + 30 * 86400,
        "metadata": {k[9:-1]: v for k, v in form.items() if k.startswith("metadata[")},
    }


def _metadata(form: dict[str, str], prefix: str = "") -> dict[str, str]:
    start = f"{prefix}[metadata][" if prefix else "metadata["
    return {k[len(start) : -1]: v for k, v in form.items() if k.startswith(start)}


def _session(state: StripeState, form: dict[str, str]) -> dict:
    session_id = f"cs_test_{secrets.token_hex(12)}"
    session = {
        "id": session_id,
        "object": "checkout.session",
        "mode": form.get("mode", "payment"),
        "url": f"https://checkout.stripe.test/c/pay/{session_id}",
        "status": "complete",
        "payment_status": "paid",
        "metadata": _metadata(form),
        "client_reference_id": form.get("client_reference_id"),
        "expires_at": int(time.time()) + 86400,
        "payment_intent": None,
        "subscription": None,
    }
    if session["mode"] == "subscription":
        subscription = {**_subscription({}), "metadata": _metadata(form, "subscription_data")}
        state.subscriptions[subscription["id"]] = subscription
        session["subscription"] = subscription["id"]
    else:
        session["amount_total"] = int(form["line_items[0][price_data][unit_amount]"])
        session["currency"] = form["line_items[0][price_data][currency]"]
        intent = _intent({"amount": str(session["amount_total"]), "currency": session["currency"]})
        state.intents[intent["id"]] = intent
        session["payment_intent"] = intent["id"]
    state.sessions[session_id] = session
    return session


def stored_intent(state: StripeState, form: dict[str, str]) -> dict:
    intent = _intent(form)
    state.intents[intent["id"]] = intent
    return intent


def _intent_action(state: StripeState, path: str) -> tuple[int, dict]:
    _, _, _, intent_id, action = path.split("/")
    intent = state.intents.get(intent_id)
    done = {"cancel": "canceled", "capture": "succeeded"}.get(action)
    if intent is None or done is None:
        return 404, {"error": {"message": "No such payment_intent"}}
    if intent["status"] in ("canceled", "succeeded"):
        message = f"This PaymentIntent's status is {intent['status']}."
        return 400, {"error": {"type": "invalid_request_error", "message": message}}
    intent["status"] = done
    return 200, dict(intent)


def _handler(state: StripeState) -> type[BaseHTTPRequestHandler]:
    creates = {
        "/v1/checkout/sessions": lambda form: _session(state, form),
        "/v1/payment_intents": lambda form: stored_intent(state, form),
        "/v1/refunds": lambda form: {"id": f"re_{secrets.token_hex(8)}", "object": "refund", "status": "succeeded"},
        "/v1/customers": lambda form: {"id": f"cus_{secrets.token_hex(8)}", "object": "customer"},
        "/v1/subscriptions": _subscription,
    }

    class Handler(BaseHTTPRequestHandler):
        def do_GET(self):
            with state.lock:
                state.requests.append(("GET", self.path.split("?")[0], None))
            if self.path.startswith("/v1/customers"):
                return self._answer(200, {"object": "list", "data": []})
            if self.path.startswith("/v1/payment_intents/"):
                with state.lock:
                    intent = state.intents.get(self.path.split("?")[0].rsplit("/", 1)[-1])
                if intent is not None:
                    return self._answer(200, intent)
            if self.path.startswith("/v1/checkout/sessions/"):
                with state.lock:
                    session = state.sessions.get(self.path.split("?")[0].rsplit("/", 1)[-1])
                if session is not None:
                    return self._answer(200, session)
            return self._answer(404, {"error": {"message": "No such object"}})

        def do_POST(self):
            form = dict(parse_qsl(self.rfile.read(int(self.headers.get("Content-Length") or 0)).decode()))
            key = self.headers.get("Idempotency-Key")
            with state.lock:
                state.requests.append(("POST", self.path, key))
            if state.hold is not None:
                state.held.set()
                state.hold.wait(30)
            with state.lock:
                if key is not None and key in state.answers:  # Stripe replays the first answer of a key
                    status, body = state.answers[key]
                elif state.fail_next:
                    status, body = state.fail_next.pop(0), {"error": {"type": "api_error", "message": "Boom"}}
                elif self.path.startswith("/v1/payment_intents/"):  # .../cancel or .../capture
                    status, body = _intent_action(state, self.path)
                elif self.path.startswith("/v1/subscriptions/"):  # an update: cancel_at_period_end
                    subscription = state.subscriptions.get(self.path.rsplit("/", 1)[-1])
                    if subscription is None:
                        status, body = 404, {"error": {"message": "No such subscription"}}
                    else:
                        subscription["cancel_at_period_end"] = form.get("cancel_at_period_end") == "true"
                        status, body = 200, dict(subscription)
                elif self.path in creates:
                    status, body = 200, creates[self.path](form)
                    if self.path == "/v1/subscriptions":
                        state.subscriptions[body["id"]] = dict(body)
                    if key is not None:
                        state.answers[key] = (status, {**body, "_path": self.path})
                else:
                    status, body = 404, {"error": {"message": "Unknown path"}}
            return self._answer(status, {k: v for k, v in body.items() if k != "_path"})

        def _answer(self, status: int, body: dict) -> None:
            data = json.dumps(body).encode()
            self.send_response(status)
            self.send_header("Content-Type", "application/json")
            self.send_header("Content-Length", str(len(data)))
            self.end_headers()
            self.wfile.write(data)

        def log_message(self, *args):
            pass

    return Handler


@contextmanager
def stripe_stand_in(settings) -> Iterator[StripeState]:
    """Point the Stripe adapter (PAYMENTS_PROVIDER=stripe) at a fresh stand-in for the test."""
    state = StripeState()
    with serve_http(_handler(state)) as server:
        settings.PAYMENTS_PROVIDER = "stripe"
        settings.STRIPE_API_KEY = "sk_test_stand_in"
        settings.STRIPE_API_BASE = f"http://127.0.0.1:{server.server_address[1]}"
        settings.STRIPE_PRICE_IDS = {"starter": "price_starter", "growth": "price_growth", "scale": "price_scale"}
        yield state
