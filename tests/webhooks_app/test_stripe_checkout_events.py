"""Stripe Checkout end to end: the API creates a session at a fake Stripe, the payer's page is the
session's `url`, and Stripe's signed events, in either order, settle our record exactly once.

The intent's / subscription's metadata in the events is what the fake received in
`payment_intent_data[metadata]` / `subscription_data[metadata]`, as Stripe copies it.
"""

from __future__ import annotations

import json
import time
from http.server import BaseHTTPRequestHandler
from urllib.parse import parse_qsl

import pytest

from assistant.models import CreditTopUp
from payments.models import Payment
from payments.provider_events import build_event
from tasks_market.models import Delivery, Task
from teams.models import Team
from tests.support.servers import serve_http
from tests.tasks_market.conftest import place_bid, post_task, register_agent

pytestmark = pytest.mark.django_db


class FakeStripe(BaseHTTPRequestHandler):
    """Checkout Sessions, customers and subscription updates, answered as Stripe does; records every request."""

    requests: list[dict] = []

    def _answer(self, body: dict) -> None:
        data = json.dumps(body).encode()
        self.send_response(200)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(data)))
        self.end_headers()
        self.wfile.write(data)

    def do_GET(self):
        FakeStripe.requests.append({"method": "GET", "path": self.path, "form": []})
        self._answer({"object": "list", "data": []})  # GET /v1/customers?email=...: nobody yet

    def do_POST(self):
        form = parse_qsl(self.rfile.read(int(self.headers.get("Content-Length", 0))).decode())
        FakeStripe.requests.append(
            {"method": "POST", "path": self.path, "form": form, "key": self.headers.get("Idempotency-Key")}
        )
        fields = dict(form)
        if self.path == "/v1/customers":
            return self._answer({"id": "cus_fake", "object": "customer"})
        if self.path.startswith("/v1/subscriptions/"):
            return self._answer(
                {
                    "id": self.path.rsplit("/", 1)[-1],
                    "object": "subscription",
                    "status": "active",
                    "cancel_at_period_end": fields.get("cancel_at_period_end") == "true",
                    "current_period_end": int(time.time()) + 86400 * 20,
                    "metadata": {},
                }
            )
        assert self.path == "/v1/checkout/sessions", self.path
        number = len([r for r in FakeStripe.requests if r["path"] == self.path])
        session_id = f"cs_test_{number:04d}"
        self._answer(
            {
                "id": session_id,
                "object": "checkout.session",
                "mode": fields["mode"],
                "status": "open",
                "amount_total": int(fields.get("line_items[0][price_data][unit_amount]", 4900)),
                "currency": fields.get("line_items[0][price_data][currency]", "usd"),
                "url": f"https://checkout.stripe.com/c/pay/{session_id}",
                "expires_at": int(time.time()) + 86400,
                "metadata": metadata(form, "metadata"),
            }
        )

    def log_message(self, *args):
        pass


def metadata(form: list[tuple[str, str]], prefix: str) -> dict[str, str]:
    """`prefix[k]=v` pairs of a form as a dict, e.g. prefix `payment_intent_data[metadata]`."""
    return {key[len(prefix) + 1 : -1]: value for key, value in form if key.startswith(prefix + "[")}


def session_form(session_id: str) -> list[tuple[str, str]]:
    number = int(session_id.rsplit("_", 1)[-1])
    return [r for r in FakeStripe.requests if r["path"] == "/v1/checkout/sessions"][number - 1]["form"]


@pytest.fixture
def stripe(settings):
    FakeStripe.requests = []
    with serve_http(FakeStripe) as server:
        settings.PAYMENTS_PROVIDER = "stripe"
        settings.STRIPE_API_KEY = "sk_test_fake"
        settings.STRIPE_API_BASE = f"http://127.0.0.1:{server.server_address[1]}"
        settings.STRIPE_PRICE_IDS = {"growth": "price_growth"}
        yield FakeStripe


def deliver(api, event_type: str, obj: dict, created: int | None = None):
    event = build_event(event_type, obj, created=created)
    response = api.post(
        "/api/v1/webhooks/payments",
        data=event.body,
        content_type="application/json",
        HTTP_PAYMENTS_SIGNATURE=event.headers["Payments-Signature"],
    )
    assert response.status_code == 200, response.content
    return response.json()["status"]


def completed_payment_session(session_id: str, intent_id: str) -> dict:
    form = session_form(session_id)
    return {
        "id": session_id,
        "object": "checkout.session",
        "mode": "payment",
        "status": "complete",
        "payment_intent": intent_id,
        "metadata": metadata(form, "metadata"),
    }


def intent_object(session_id: str, intent_id: str, event_type: str) -> dict:
    form = session_form(session_id)
    amount = int(dict(form)["line_items[0][price_data][unit_amount]"])
    captured = event_type == "payment_intent.succeeded"
    return {
        "id": intent_id,
        "object": "payment_intent",
        "status": "succeeded" if captured else "requires_capture",
        "amount": amount,
        "amount_capturable": 0 if captured else amount,
        "amount_received": amount if captured else 0,
        "currency": dict(form)["line_items[0][price_data][currency]"],
        "metadata": metadata(form, "payment_intent_data[metadata]"),
    }


def events_in_order(order: str, session: tuple[str, dict], intent: tuple[str, dict]) -> list[tuple[str, dict]]:
    return [session, intent] if order == "session_first" else [intent, session]


# --- Task payments ------------------------------------------------------------------------------------


@pytest.mark.parametrize("order", ["session_first", "intent_first"])
@pytest.mark.parametrize("intent_event", ["payment_intent.amount_capturable_updated", "payment_intent.succeeded"])
def test_a_task_payment_is_applied_once_whatever_the_order(stripe, api, alice_api, bob_api, order, intent_event):
    task = post_task(alice_api)
    agent = register_agent(bob_api)
    bid = place_bid(bob_api, task["id"], agent["id"])
    selection = alice_api.post(
        f"/api/v1/tasks/{task['id']}/bids/{bid['id']}/select",
        {"success_url": "https://app.example.com/paid", "cancel_url": "https://app.example.com/declined"},
        format="json",
    )
    assert selection.status_code == 200, selection.content
    payment = selection.json()["payment"]
    session_id = payment["provider_payment_id"]

    assert payment["checkout_url"] == f"https://checkout.stripe.com/c/pay/{session_id}"
    [create] = [r for r in stripe.requests if r["path"] == "/v1/checkout/sessions"]
    assert create["key"].startswith(f"bid-select:{bid['id']}")
    assert ("line_items[0][price_data][unit_amount]", "15000") in create["form"]
    assert metadata(create["form"], "payment_intent_data[metadata]") == {"task_id": task["id"], "bid_id": bid["id"]}
    assert ("success_url", "https://app.example.com/paid") in create["form"]

    session = ("checkout.session.completed", completed_payment_session(session_id, "pi_paid_1"))
    intent = (intent_event, intent_object(session_id, "pi_paid_1", intent_event))
    for event_type, obj in events_in_order(order, session, intent):
        assert deliver(api, event_type, obj) == "processed"

    assert Task.objects.get(id=task["id"]).status == "delivering"
    stored = Payment.objects.get(id=payment["id"])
    assert (stored.provider_payment_id, stored.status) == ("pi_paid_1", "succeeded")
    for event_type, obj in [session, intent]:  # Stripe sends each again (new event ids)
        deliver(api, event_type, obj)
    assert Delivery.objects.filter(task_id=task["id"]).count() == 1


def test_an_intent_event_for_a_payment_it_does_not_name_links_nothing(stripe, api, alice_api, bob_api):
    task = post_task(alice_api)
    bid = place_bid(bob_api, task["id"], register_agent(bob_api)["id"])
    payment = alice_api.post(f"/api/v1/tasks/{task['id']}/bids/{bid['id']}/select").json()["payment"]
    obj = intent_object(payment["provider_payment_id"], "pi_stranger", "payment_intent.succeeded")
    obj["metadata"] = {"task_id": task["id"], "bid_id": "5b0f6c7e-0000-4000-8000-000000000000"}

    deliver(api, "payment_intent.succeeded", obj)

    assert Payment.objects.get(id=payment["id"]).provider_payment_id == payment["provider_payment_id"]
    assert Task.objects.get(id=task["id"]).status == "awaiting_payment"


def expired_session(session_id: str) -> dict:
    form = session_form(session_id)
    return {
        "id": session_id,
        "object": "checkout.session",
        "mode": "payment",
        "status": "expired",
        "payment_status": "unpaid",
        "payment_intent": None,
        "metadata": metadata(form, "metadata"),
    }


def test_a_checkout_page_that_expires_unpaid_opens_the_task_again(stripe, api, alice_api, bob_api):
    task = post_task(alice_api)
    bid = place_bid(bob_api, task["id"], register_agent(bob_api)["id"])
    payment = alice_api.post(f"/api/v1/tasks/{task['id']}/bids/{bid['id']}/select").json()["payment"]

    assert deliver(api, "checkout.session.expired", expired_session(payment["provider_payment_id"])) == "processed"

    assert Payment.objects.get(id=payment["id"]).status == "failed"
    stored = Task.objects.get(id=task["id"])
    assert (stored.status, stored.selected_bid_id) == ("open", None)
    again = alice_api.post(f"/api/v1/tasks/{task['id']}/bids/{bid['id']}/select")  # the poster can select again
    assert again.status_code == 200, again.content
    assert again.json()["payment"]["provider_payment_id"] != payment["provider_payment_id"]


def test_an_expired_session_after_the_payment_succeeded_changes_nothing(stripe, api, alice_api, bob_api):
    task = post_task(alice_api)
    bid = place_bid(bob_api, task["id"], register_agent(bob_api)["id"])
    payment = alice_api.post(f"/api/v1/tasks/{task['id']}/bids/{bid['id']}/select").json()["payment"]
    session_id = payment["provider_payment_id"]
    deliver(api, "checkout.session.completed", completed_payment_session(session_id, "pi_paid_2"))
    deliver(api, "payment_intent.succeeded", intent_object(session_id, "pi_paid_2", "payment_intent.succeeded"))

    deliver(api, "checkout.session.expired", expired_session(session_id))

    assert Payment.objects.get(id=payment["id"]).status == "succeeded"
    assert Task.objects.get(id=task["id"]).status == "delivering"


# --- Credit top-ups -----------------------------------------------------------------------------------


@pytest.mark.parametrize("order", ["session_first", "intent_first"])
def test_a_credit_top_up_is_credited_once_whatever_the_order(stripe, api, alice_api, alice, order):
    before = alice_api.get("/api/v1/allmodelchat/credits").json()["credits"]
    response = alice_api.post("/api/v1/allmodelchat/credits/top-up", {"pack": "small"}, format="json")
    assert response.status_code == 201, response.content
    top_up = response.json()
    session_id = top_up["provider_payment_id"]
    assert top_up["checkout_url"] == f"https://checkout.stripe.com/c/pay/{session_id}"
    [create] = [r for r in stripe.requests if r["path"] == "/v1/checkout/sessions"]
    assert create["key"] == f"credit-top-up:{top_up['id']}"
    assert ("payment_intent_data[capture_method]", "automatic") in create["form"]

    session = ("checkout.session.completed", completed_payment_session(session_id, "pi_pack_1"))
    intent = ("payment_intent.succeeded", intent_object(session_id, "pi_pack_1", "payment_intent.succeeded"))
    for event_type, obj in events_in_order(order, session, intent):
        deliver(api, event_type, obj)

    stored = CreditTopUp.objects.get(id=top_up["id"])
    assert (stored.provider_payment_id, stored.status) == ("pi_pack_1", "succeeded")
    for event_type, obj in [session, intent]:  # Stripe sends each again (new event ids)
        deliver(api, event_type, obj)
    assert alice_api.get("/api/v1/allmodelchat/credits").json()["credits"] == before + 20


def test_a_top_up_whose_checkout_page_expires_unpaid_fails_and_credits_nothing(stripe, api, alice_api):
    before = alice_api.get("/api/v1/allmodelchat/credits").json()["credits"]
    top_up = alice_api.post("/api/v1/allmodelchat/credits/top-up", {"pack": "small"}, format="json").json()

    deliver(api, "checkout.session.expired", expired_session(top_up["provider_payment_id"]))

    assert CreditTopUp.objects.get(id=top_up["id"]).status == "failed"
    assert alice_api.get("/api/v1/allmodelchat/credits").json()["credits"] == before


# --- Team subscriptions -------------------------------------------------------------------------------


@pytest.mark.parametrize("order", ["session_first", "subscription_first"])
def test_a_hired_team_learns_its_subscription_whatever_the_order(stripe, api, alice_api, order):
    response = alice_api.post(
        "/api/v1/teams",
        {"team_type": "content", "display_name": "Content crew", "tier": "growth"},
        format="json",
    )
    assert response.status_code == 201, response.content
    team = response.json()
    session_id = team["payments_subscription_id"]
    assert session_id.startswith("cs_test_")
    assert team["status"] == "onboarding"
    assert team["checkout_url"] == f"https://checkout.stripe.com/c/pay/{session_id}"
    create = next(r for r in stripe.requests if r["path"] == "/v1/checkout/sessions")
    assert create["key"] == f"team-hire:{team['id']}"
    assert ("line_items[0][price]", "price_growth") in create["form"]

    now = int(time.time())
    form = session_form(session_id)
    session = (
        "checkout.session.completed",
        {
            "id": session_id,
            "object": "checkout.session",
            "mode": "subscription",
            "subscription": "sub_hired_1",
            "client_reference_id": team["id"],
            "metadata": metadata(form, "metadata"),
        },
    )
    subscription = (
        "customer.subscription.created",
        {
            "id": "sub_hired_1",
            "object": "subscription",
            "status": "active",
            "cancel_at_period_end": False,
            "items": {"data": [{"current_period_end": now + 86400 * 30}]},
            "metadata": metadata(form, "subscription_data[metadata]"),
        },
    )
    first, second = [session, subscription] if order == "session_first" else [subscription, session]
    deliver(api, *first, created=now)
    assert Team.objects.get(id=team["id"]).payments_subscription_id == "sub_hired_1"  # whichever came first
    deliver(api, *second, created=now)

    stored = Team.objects.get(id=team["id"])
    assert (stored.status, stored.payments_subscription_id) == ("active", "sub_hired_1")

    unsubscribed = alice_api.post(f"/api/v1/teams/{team['id']}/unsubscribe")
    assert unsubscribed.status_code == 200, unsubscribed.content
    assert stripe.requests[-1]["path"] == "/v1/subscriptions/sub_hired_1"
    assert Team.objects.get(id=team["id"]).status == "cancelling"


# --- Stripe's own signature header --------------------------------------------------------------------


@pytest.mark.parametrize(("secret", "expected"), [(None, 200), ("whsec_someone_else", 400)])
def test_stripe_signs_with_its_own_header_name(api, settings, secret, expected):
    settings.PAYMENTS_WEBHOOK_SECRET = ["whsec_stripe_endpoint"]
    event = build_event("payment_intent.succeeded", {"id": "pi_unknown", "object": "payment_intent"}, secret=secret)

    response = api.post(
        "/api/v1/webhooks/payments",
        data=event.body,
        content_type="application/json",
        HTTP_STRIPE_SIGNATURE=event.headers["Payments-Signature"],
    )

    assert response.status_code == expected, response.content
