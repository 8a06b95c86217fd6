"""A signed payment_intent.succeeded is applied only when its money is the payment's.

A provider event for 1 cent (or in another currency, or with no amount at all) about a 40 USD
payment is answered 200 `rejected` (received and handled by refusing it), recorded on the payment
and on the inbound event, logged at ERROR and visible in the admin; the task keeps waiting for its
payment, and the real event still applies afterwards.
"""

from __future__ import annotations

import logging

import pytest
from django.test import Client

from payments.models import Payment
from payments.provider_events import build_event
from tasks_market.models import Task
from tests.tasks_market.conftest import place_bid, post_task, register_agent
from webhooks_app.models import InboundEvent

pytestmark = pytest.mark.django_db


@pytest.fixture
def payment(alice_api, bob_api) -> Payment:
    """A 40 USD bid selected by its poster: the task awaits this payment."""
    task = post_task(alice_api)
    agent = register_agent(bob_api)
    bid = place_bid(bob_api, task["id"], agent["id"], amount="40.00", currency="usd")
    selected = alice_api.post(f"/api/v1/tasks/{task['id']}/bids/{bid['id']}/select")
    assert selected.status_code == 200, selected.content
    payment = Payment.objects.get(id=selected.json()["payment"]["id"])
    assert (payment.amount, payment.currency, Task.objects.get(pk=payment.source_id).status) == (
        40,
        "usd",
        "awaiting_payment",
    )
    return payment


def _succeeded(api, payment: Payment, **money):
    obj = {"id": payment.provider_payment_id, "object": "payment_intent", "status": "succeeded", **money}
    event = build_event("payment_intent.succeeded", obj)
    response = api.post(
        "/api/v1/webhooks/payments",
        data=event.body,
        content_type="application/json",
        HTTP_PAYMENTS_SIGNATURE=event.headers["Payments-Signature"],
    )
    return event, response


@pytest.mark.parametrize(
    "money",
    [
        {"amount": 1, "currency": "usd"},
        {"amount": 4000, "currency": "eur"},
        {"amount": 4000, "currency": "usd", "amount_received": 1},
        {"amount": "4000", "currency": "usd"},
        {"currency": "usd"},
        {"amount": 4000},
    ],
    ids=["one-cent", "other-currency", "received-less", "amount-as-text", "no-amount", "no-currency"],
)
def test_a_success_for_other_money_is_recorded_and_not_applied(api, payment, money, caplog):
    with caplog.at_level(logging.ERROR):
        event, response = _succeeded(api, payment, **money)

    assert response.status_code == 200, response.content
    assert response.json() == {"status": "rejected", "event_id": event.event_id}
    assert Task.objects.get(id=payment.source_id).status == "awaiting_payment"
    refused = Payment.objects.get(id=payment.id)
    assert refused.status == "requires_payment"
    assert refused.mismatch_reason and refused.mismatch_event_id == event.event_id
    stored = InboundEvent.objects.get(event_id=event.event_id)
    assert stored.status == "rejected" and stored.last_error
    assert any(r.levelno == logging.ERROR and event.event_id in r.getMessage() for r in caplog.records)


def test_a_refused_event_is_not_applied_when_sent_again_and_the_real_one_still_is(api, payment):
    event, _ = _succeeded(api, payment, amount=1, currency="usd")
    again = api.post(
        "/api/v1/webhooks/payments",
        data=event.body,
        content_type="application/json",
        HTTP_PAYMENTS_SIGNATURE=event.headers["Payments-Signature"],
    )
    assert again.json()["status"] == "duplicate"
    assert Task.objects.get(id=payment.source_id).status == "awaiting_payment"

    _, real = _succeeded(api, payment, amount=4000, currency="USD", amount_received=4000)

    assert real.json()["status"] == "processed"
    assert Task.objects.get(id=payment.source_id).status == "delivering"
    assert Payment.objects.get(id=payment.id).status == "succeeded"


def test_staff_find_refused_payments_with_an_admin_filter(api, payment, staff):
    _succeeded(api, payment, amount=1, currency="usd")
    admin = Client()
    admin.force_login(staff)

    flagged = admin.get("/admin/payments/payment/?mismatch=yes", secure=True)
    clean = admin.get("/admin/payments/payment/?mismatch=no", secure=True)
    events = admin.get("/admin/webhooks_app/inboundevent/?status__exact=rejected", secure=True)

    assert flagged.status_code == clean.status_code == events.status_code == 200
    assert payment.provider_payment_id in flagged.content.decode()
    assert payment.provider_payment_id not in clean.content.decode()
    assert payment.provider_payment_id in events.content.decode()
