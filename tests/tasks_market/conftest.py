"""A real agent endpoint on 127.0.0.1 that verifies Standard Webhooks signatures, and API helpers."""

from __future__ import annotations

import json
import threading
import time
from datetime import timedelta
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

import pytest
from django.utils import timezone
from standardwebhooks import Webhook, WebhookVerificationError

from payments.provider_events import build_event


class Receiver:
    """Records every POST; verifies its signature when `secret` is set (401 if it does not verify)."""

    def __init__(self):
        self.requests: list[dict] = []
        self.secret: str | None = None
        self.status = 200
        self.delay = 0.0
        self.on_request = None  # called with the parsed body before answering
        self.lock = threading.Lock()
        self._server = ThreadingHTTPServer(("127.0.0.1", 0), self._handler())
        self._server.daemon_threads = True
        threading.Thread(target=self._server.serve_forever, daemon=True).start()

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self._server.server_address[1]}/hook"

    def close(self) -> None:
        self._server.shutdown()
        self._server.server_close()

    def bodies(self, type_: str | None = None) -> list[dict]:
        with self.lock:
            found = [r["json"] for r in self.requests]
        return [b for b in found if type_ is None or b.get("type") == type_]

    def types(self) -> list[str]:
        return [b["type"] for b in self.bodies()]

    def _handler(self):
        receiver = self

        class Handler(BaseHTTPRequestHandler):
            def do_POST(self):
                body = self.rfile.read(int(self.headers.get("Content-Length") or 0))
                headers = {k.lower(): v for k, v in self.headers.items()}
                verified = None
                if receiver.secret:
                    try:
                        Webhook(receiver.secret).verify(body, headers)
                        verified = True
                    except WebhookVerificationError:
                        verified = False
                with receiver.lock:
                    receiver.requests.append(
                        {"headers": headers, "body": body, "json": json.loads(body), "verified": verified}
                    )
                if receiver.on_request:
                    receiver.on_request(json.loads(body))
                if receiver.delay:
                    time.sleep(receiver.delay)
                status = 401 if verified is False else receiver.status
                self.send_response(status)
                self.send_header("Content-Type", "application/json")
                self.end_headers()
                self.wfile.write(b'{"ok": true}')

            def log_message(self, *args):
                pass

        return Handler


@pytest.fixture
def agent_server():
    receiver = Receiver()
    yield receiver
    receiver.close()


@pytest.fixture
def hook_server():
    receiver = Receiver()
    yield receiver
    receiver.close()


def iso_in(**delta) -> str:
    return (timezone.now() + timedelta(**delta)).isoformat()


def register_agent(client, url: str = "https://agents.example.com/hook", **overrides) -> dict:
    body = {"name": "Copybot", "description": "Writes launch copy.", "endpoint_url": url, **overrides}
    response = client.post("/api/v1/agents", body, format="json")
    assert response.status_code == 201, response.content
    return response.json()


def task_body(**overrides) -> dict:
    """A valid body for POST /api/v1/tasks, with `overrides` in place."""
    return {
        "title": "Write launch copy for our analytics dashboard",
        "description": "Announce the new analytics dashboard to marketing teams; friendly tone.",
        "budget_amount": "200.00",
        "budget_currency": "usd",
        "deadline": iso_in(days=7),
        "category": "content",
        "requirements": ["Under 300 words", "Mention the free trial"],
        **overrides,
    }


def post_task(client, **overrides) -> dict:
    body = task_body(**overrides)
    response = client.post("/api/v1/tasks", body, format="json")
    assert response.status_code == 201, response.content
    return response.json()


def place_bid(client, task_id: str, agent_id: str, **overrides) -> dict:
    body = {
        "agent_id": agent_id,
        "amount": "150.00",
        "currency": "usd",
        "proposal": "Friendly launch copy for the analytics dashboard, with the free trial up front.",
        "eta_hours": 24,
        **overrides,
    }
    response = client.post(f"/api/v1/tasks/{task_id}/bids", body, format="json")
    assert response.status_code == 201, response.content
    return response.json()


def post_payment_event(
    api, event_type: str, provider_payment_id: str, *, created: int | None = None, event_id: str | None = None
):
    """A signed event about one of our payments, carrying its amount and currency as a provider's does."""
    from payments.models import Payment
    from payments.money import to_minor

    obj = {"id": provider_payment_id, "object": "payment_intent", "status": "succeeded", "metadata": {}}
    payment = Payment.objects.filter(provider_payment_id=provider_payment_id).first()
    if payment is not None:
        obj |= {"amount": to_minor(payment.amount, payment.currency), "currency": payment.currency}
    event = build_event(event_type, obj, created=created, event_id=event_id)
    return api.post(
        "/api/v1/webhooks/payments",
        data=event.body,
        content_type="application/json",
        HTTP_PAYMENTS_SIGNATURE=event.headers["Payments-Signature"],
    )


def simulate_payment(api, provider_payment_id: str, outcome: str = "succeeded"):
    """The customer pays (or fails to) at the local provider, which signs the event we then receive."""
    from payments.providers.local import LocalPaymentProvider

    _, event = LocalPaymentProvider().simulate_payment(provider_payment_id, outcome)
    return api.post(
        "/api/v1/webhooks/payments",
        data=event.body,
        content_type="application/json",
        HTTP_PAYMENTS_SIGNATURE=event.headers["Payments-Signature"],
    )


def selected_task(poster_api, bidder_api, agent_url: str = "https://agents.example.com/hook") -> dict:
    """A task with a selected bid awaiting payment: {task, agent, bid, payment}."""
    task = post_task(poster_api)
    agent = register_agent(bidder_api, url=agent_url)
    bid = place_bid(bidder_api, task["id"], agent["id"])
    selection = poster_api.post(f"/api/v1/tasks/{task['id']}/bids/{bid['id']}/select").json()
    return {"task": task, "agent": agent, "bid": bid, "payment": selection["payment"]}


@pytest.fixture
def seller(db):
    """The agent's owner of the money tests (tests/payments/payouts/conftest.py has the same)."""
    from tests.support.factories import UserFactory

    return UserFactory(email="seller@example.com")


@pytest.fixture
def seller_api(seller):
    from tests.conftest import client_with_token, jwt_for

    return client_with_token(jwt_for(seller))
