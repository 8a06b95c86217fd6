"""Payments follow the provider's signed events on the payments webhook."""

from __future__ import annotations

import time

import pytest

from payments.models import LocalPayment, Payment
from tasks_market.models import Bid, Delivery, Task
from tests.tasks_market.conftest import (
    place_bid,
    post_payment_event,
    register_agent,
    selected_task,
    simulate_payment,
)

pytestmark = pytest.mark.django_db


@pytest.fixture
def flow(alice_api, bob_api, agent_server):
    return selected_task(alice_api, bob_api, agent_server.url)


def test_success_starts_the_delivery_and_dispatches_it(
    api, alice_api, bob_api, staff_api, flow, agent_server, django_capture_on_commit_callbacks
):
    task_id = flow["task"]["id"]
    loser_agent = register_agent(staff_api, name="Loser")
    Task.objects.filter(id=task_id).update(status="open")  # let a second bid in, then back to awaiting payment
    loser = place_bid(staff_api, task_id, loser_agent["id"])
    Task.objects.filter(id=task_id).update(status="awaiting_payment")
    agent_server.secret = flow["agent"]["signing_secret"]

    with django_capture_on_commit_callbacks(execute=True):
        response = simulate_payment(api, flow["payment"]["provider_payment_id"])

    assert response.status_code == 200, response.content
    assert response.json()["status"] == "processed"
    task = Task.objects.get(id=task_id)
    assert task.status == "delivering"
    assert Payment.objects.get(id=flow["payment"]["id"]).status == "succeeded"
    assert Bid.objects.get(id=flow["bid"]["id"]).status == "selected"
    assert Bid.objects.get(id=loser["id"]).status == "rejected"
    delivery = Delivery.objects.get(task=task)
    assert delivery.status == "dispatched"
    assert [r["verified"] for r in agent_server.requests] == [True]
    dispatched = agent_server.bodies("task.dispatched")[0]["data"]
    assert dispatched["task"]["id"] == task_id
    assert dispatched["bid"]["id"] == flow["bid"]["id"]
    assert dispatched["submit"]["path"] == f"/api/v1/tasks/{task_id}/delivery"
    assert agent_server.requests[0]["headers"]["webhook-id"] == f"dlv_{delivery.id.hex}_1"


def test_failure_reopens_the_task_and_the_bid(api, alice_api, flow):
    response = simulate_payment(api, flow["payment"]["provider_payment_id"], "failed")

    assert response.status_code == 200
    assert Task.objects.get(id=flow["task"]["id"]).status == "open"
    assert Task.objects.get(id=flow["task"]["id"]).selected_bid is None
    assert Bid.objects.get(id=flow["bid"]["id"]).status == "pending"
    assert Payment.objects.get(id=flow["payment"]["id"]).status == "failed"
    # The poster can select again: a new payment.
    again = alice_api.post(f"/api/v1/tasks/{flow['task']['id']}/bids/{flow['bid']['id']}/select")
    assert again.status_code == 200
    assert again.json()["payment"]["id"] != flow["payment"]["id"]


def test_the_same_event_twice_is_applied_once(api, flow, django_capture_on_commit_callbacks):
    pid = flow["payment"]["provider_payment_id"]
    LocalPayment.objects.filter(id=pid).update(status="succeeded")

    with django_capture_on_commit_callbacks(execute=True):
        first = post_payment_event(api, "payment_intent.succeeded", pid, event_id="evt_same")
        second = post_payment_event(api, "payment_intent.succeeded", pid, event_id="evt_same")
        third = post_payment_event(api, "payment_intent.succeeded", pid)  # a new id, same news

    assert [r.json()["status"] for r in (first, second, third)] == ["processed", "duplicate", "processed"]
    assert Delivery.objects.filter(task_id=flow["task"]["id"]).count() == 1


def test_a_late_failure_does_not_roll_back_a_success(api, flow, django_capture_on_commit_callbacks):
    pid = flow["payment"]["provider_payment_id"]
    now = int(time.time())
    with django_capture_on_commit_callbacks(execute=True):
        post_payment_event(api, "payment_intent.succeeded", pid, created=now)
        older = post_payment_event(api, "payment_intent.payment_failed", pid, created=now - 30)
        newer = post_payment_event(api, "payment_intent.payment_failed", pid, created=now + 30)

    assert older.status_code == newer.status_code == 200
    assert Payment.objects.get(id=flow["payment"]["id"]).status == "succeeded"
    assert Task.objects.get(id=flow["task"]["id"]).status == "delivering"


def test_a_retried_payment_that_succeeds_after_failing_resumes_the_task(api, flow, django_capture_on_commit_callbacks):
    pid = flow["payment"]["provider_payment_id"]
    now = int(time.time())
    with django_capture_on_commit_callbacks(execute=True):
        post_payment_event(api, "payment_intent.payment_failed", pid, created=now)
        post_payment_event(api, "payment_intent.succeeded", pid, created=now + 10)

    assert Task.objects.get(id=flow["task"]["id"]).status == "delivering"
    assert Bid.objects.get(id=flow["bid"]["id"]).status == "selected"
    assert Delivery.objects.filter(task_id=flow["task"]["id"]).exists()


def test_money_for_a_task_that_moved_on_is_refunded(
    api, alice_api, staff_api, flow, django_capture_on_commit_callbacks
):
    task_id, old_pid = flow["task"]["id"], flow["payment"]["provider_payment_id"]
    now = int(time.time())
    post_payment_event(api, "payment_intent.payment_failed", old_pid, created=now)
    LocalPayment.objects.filter(id=old_pid).update(status="failed")
    other_agent = register_agent(staff_api, name="Other")
    other = place_bid(staff_api, task_id, other_agent["id"])
    assert alice_api.post(f"/api/v1/tasks/{task_id}/bids/{other['id']}/select").status_code == 200
    LocalPayment.objects.filter(id=old_pid).update(status="succeeded")  # the customer paid the old one after all

    with django_capture_on_commit_callbacks(execute=True):
        response = post_payment_event(api, "payment_intent.succeeded", old_pid, created=now + 10)

    assert response.status_code == 200
    assert Payment.objects.get(provider_payment_id=old_pid).status == "refunded"
    assert LocalPayment.objects.get(id=old_pid).status == "refunded"
    task = Task.objects.get(id=task_id)
    assert (task.status, str(task.selected_bid_id)) == ("awaiting_payment", other["id"])
    assert not Delivery.objects.filter(task_id=task_id).exists()


def test_success_after_a_cancel_starts_nothing(api, alice_api, flow, django_capture_on_commit_callbacks):
    alice_api.post(f"/api/v1/tasks/{flow['task']['id']}/cancel")

    with django_capture_on_commit_callbacks(execute=True):
        response = post_payment_event(api, "payment_intent.succeeded", flow["payment"]["provider_payment_id"])

    assert response.status_code == 200
    assert Task.objects.get(id=flow["task"]["id"]).status == "cancelled"
    assert not Delivery.objects.exists()


def test_events_for_unknown_payments_are_accepted(api):
    response = post_payment_event(api, "payment_intent.succeeded", "pi_unknown")

    assert response.status_code == 200
    assert not Delivery.objects.exists()


def test_outcomes_are_announced_to_both_parties(api, alice, bob, flow, django_capture_on_commit_callbacks):
    from webhooks_app.models import WebhookEvent
    from webhooks_app.services import webhook_subscription_create

    for user in (alice, bob):
        webhook_subscription_create(owner=user, url="https://hooks.example.com/x", events=["payment.failed"])

    with django_capture_on_commit_callbacks(execute=True):
        simulate_payment(api, flow["payment"]["provider_payment_id"], "failed")

    events = WebhookEvent.objects.filter(type="payment.failed")
    assert sorted(e.owner.email for e in events) == ["alice@example.com", "bob@example.com"]
    assert '"status":"failed"' in events[0].body
