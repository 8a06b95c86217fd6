"""Closing an account winds down what it started, in one transaction, and the provider hears of it after
commit, once (docs/decisions.md#closing-an-account): its bids can no longer be selected, its open tasks
take no bids, its webhook subscriptions receive nothing, its teams end with their period; what it earned
is still paid out and the other party keeps the history."""

from __future__ import annotations

from datetime import timedelta

import pytest
from django.utils import timezone

from accounts.models import User
from accounts.services import user_delete
from payments.models import LocalPayment, LocalSubscription, Payment, PaymentStatus, Payout
from payments.services.payouts import payouts_run
from tasks_market.models import Bid, BidStatus, Delivery, Task, TaskStatus
from tasks_market.services.deliveries import deliveries_release_due
from teams.models import Team, TeamStatus
from teams.services import team_link_subscription, teams_cancel_ended, teams_wind_down_catch_up
from teams.tasks import cancel_closed_account_team
from tests.conftest import client_with_token, jwt_for
from tests.payments.payouts.conftest import in_review, onboard, paid_task
from tests.support.factories import DEFAULT_PASSWORD, UserFactory
from tests.support.stripe_server import stripe_stand_in
from tests.tasks_market.conftest import place_bid, post_task, register_agent, selected_task, simulate_payment
from tests.tasks_market.factories import AgentFactory, BidFactory, TaskFactory, text_artefact
from webhooks_app.models import WebhookDelivery, WebhookSubscription

pytestmark = pytest.mark.django_db


def close(client, password: str = DEFAULT_PASSWORD):
    return client.delete("/api/v1/auth/me", {"current_password": password}, format="json")


def hire(client) -> dict:
    response = client.post(
        "/api/v1/teams", {"team_type": "seo", "display_name": "SEO", "tier": "growth"}, format="json"
    )
    assert response.status_code == 201, response.content
    return response.json()


def subscribe(client, events: list[str]) -> str:
    body = {"url": "https://hooks.example.com/closure", "events": events}
    response = client.post("/api/v1/webhooks/subscriptions", body, format="json")
    assert response.status_code == 201, response.content
    return response.json()["id"]


@pytest.fixture
def stripe(settings):
    with stripe_stand_in(settings) as state:
        yield state


# --- As a seller -------------------------------------------------------------------------------------


def test_its_pending_bid_is_withdrawn_and_cannot_be_selected(alice_api, bob_api):
    task = post_task(alice_api)
    bid = place_bid(bob_api, task["id"], register_agent(bob_api)["id"])

    assert close(bob_api).status_code == 204

    response = alice_api.post(f"/api/v1/tasks/{task['id']}/bids/{bid['id']}/select")
    assert (response.status_code, response.json()["code"]) == (409, "invalid_state")
    assert Bid.objects.get(id=bid["id"]).status == BidStatus.WITHDRAWN
    assert Task.objects.get(id=task["id"]).status == TaskStatus.OPEN
    assert not Payment.objects.exists() and not LocalPayment.objects.exists()  # nobody was asked to pay
    listed = alice_api.get(f"/api/v1/tasks/{task['id']}/bids").json()["items"]
    assert [(item["id"], item["status"]) for item in listed] == [(bid["id"], "withdrawn")]  # kept for the poster


def test_a_bid_placed_while_the_close_ran_cannot_be_selected(alice, alice_api):
    closed = UserFactory(is_active=False)
    task = Task.objects.get(id=post_task(alice_api)["id"])
    bid = BidFactory(task=task, agent=AgentFactory(owner=closed))

    response = alice_api.post(f"/api/v1/tasks/{task.id}/bids/{bid.id}/select")

    assert (response.status_code, response.json()["code"]) == (409, "invalid_state")
    assert "closed" in response.json()["detail"]
    assert Bid.objects.get(id=bid.id).status == BidStatus.PENDING
    assert Task.objects.get(id=task.id).status == TaskStatus.OPEN


def test_a_selection_of_its_bid_awaiting_payment_is_given_back_and_the_payment_cancelled(
    alice_api, bob_api, django_capture_on_commit_callbacks
):
    selected = selected_task(alice_api, bob_api)

    with django_capture_on_commit_callbacks(execute=True):
        assert close(bob_api).status_code == 204

    task = Task.objects.get(id=selected["task"]["id"])
    assert (task.status, task.selected_bid_id) == (TaskStatus.OPEN, None)
    assert Bid.objects.get(id=selected["bid"]["id"]).status == BidStatus.WITHDRAWN
    payment = Payment.objects.get()
    assert payment.status == PaymentStatus.CANCELLED
    assert LocalPayment.objects.get(id=payment.provider_payment_id).status == "cancelled"


def test_a_payment_made_before_its_cancel_reached_the_provider_is_refunded(alice_api, bob_api, api):
    selected = selected_task(alice_api, bob_api)
    assert close(bob_api).status_code == 204  # the cancel is queued after commit, which this test never reaches

    response = simulate_payment(api, selected["payment"]["provider_payment_id"])

    assert response.status_code == 200, response.content
    payment = Payment.objects.get()
    assert payment.refund_due_at is not None  # nothing waits for the money: it goes back
    assert Task.objects.get(id=selected["task"]["id"]).status == TaskStatus.OPEN
    assert not Delivery.objects.exists()


def test_it_cannot_close_while_its_agent_owes_a_paid_tasks_work(alice_api, bob, bob_api, api):
    owed = paid_task(alice_api, bob_api, api)
    other = post_task(alice_api)
    pending = place_bid(bob_api, other["id"], owed["agent"]["id"])
    subscription_id = subscribe(bob_api, ["bid.selected"])

    response = close(bob_api)

    assert (response.status_code, response.json()["code"]) == (409, "deliveries_owed")
    bob.refresh_from_db()
    assert bob.is_active and bob.email == "bob@example.com"  # nothing of the close happened
    assert Bid.objects.get(id=pending["id"]).status == BidStatus.PENDING
    assert WebhookSubscription.objects.get(id=subscription_id).is_active


def test_what_it_earned_is_paid_out_and_the_poster_keeps_the_history(alice_api, bob, bob_api, api):
    User.objects.filter(pk=bob.pk).update(email_verified_at=timezone.now())  # money goes to a proven address
    bob.refresh_from_db()
    onboard(bob)
    task_id = in_review(alice_api, bob_api, api)["task"]["id"]
    assert close(bob_api).status_code == 409  # in review: a revision request would send the work back
    assert alice_api.post(f"/api/v1/tasks/{task_id}/delivery/approve").status_code == 200

    assert close(bob_api).status_code == 204
    assert payouts_run() == 1

    payout = Payout.objects.get()
    assert (payout.owner_id, payout.status, str(payout.amount)) == (bob.pk, "paid", "135.000")
    assert alice_api.get(f"/api/v1/tasks/{task_id}").json()["status"] == "completed"
    delivery = alice_api.get(f"/api/v1/tasks/{task_id}/delivery")
    assert delivery.status_code == 200 and delivery.json()["status"] == "approved"


# --- As a poster -------------------------------------------------------------------------------------


def test_its_open_tasks_are_cancelled_and_take_no_bids(alice_api, bob_api, django_capture_on_commit_callbacks):
    task = post_task(alice_api)
    bid = place_bid(bob_api, task["id"], register_agent(bob_api)["id"])
    awaiting = selected_task(alice_api, bob_api)

    with django_capture_on_commit_callbacks(execute=True):
        assert close(alice_api).status_code == 204

    assert Task.objects.get(id=task["id"]).status == TaskStatus.CANCELLED
    assert Bid.objects.get(id=bid["id"]).status == BidStatus.REJECTED
    body = {"agent_id": awaiting["agent"]["id"], "amount": "150.00", "currency": "usd", "proposal": "Again, please."}
    response = bob_api.post(f"/api/v1/tasks/{task['id']}/bids", {**body, "eta_hours": 24}, format="json")
    assert response.status_code == 404  # no longer open, so no longer anyone's to see
    assert Bid.objects.filter(task_id=task["id"]).count() == 1
    # The task awaiting its payment is cancelled too, and so is the payment, at the provider first.
    assert Task.objects.get(id=awaiting["task"]["id"]).status == TaskStatus.CANCELLED
    payment = Payment.objects.get(source=f"task:{awaiting['task']['id']}")
    assert payment.status == PaymentStatus.CANCELLED
    assert LocalPayment.objects.get(id=payment.provider_payment_id).status == "cancelled"


def test_a_task_posted_while_the_close_ran_takes_no_bids(bob_api):
    task = TaskFactory(poster=UserFactory(is_active=False))
    agent = register_agent(bob_api)

    response = bob_api.post(
        f"/api/v1/tasks/{task.id}/bids",
        {"agent_id": agent["id"], "amount": "150.00", "currency": "usd", "proposal": "Hello.", "eta_hours": 24},
        format="json",
    )

    assert (response.status_code, response.json()["code"]) == (409, "invalid_state")
    assert not Bid.objects.exists()


def test_its_subscriptions_receive_no_event_and_a_task_it_paid_for_keeps_running(alice, alice_api, bob, bob_api, api):
    subscription_id = subscribe(alice_api, ["delivery.submitted", "delivery.approved"])
    task_id = paid_task(alice_api, bob_api, api)["task"]["id"]

    assert close(alice_api).status_code == 204
    subscription = WebhookSubscription.objects.get(id=subscription_id)
    assert (subscription.is_active, subscription.disabled_reason) == (False, "The account was closed.")

    # The seller's work is honoured: it still submits, and the review window releases the payment.
    submitted = bob_api.post(f"/api/v1/tasks/{task_id}/delivery", {"artefacts": [text_artefact()]}, format="json")
    assert submitted.status_code == 200, submitted.content
    Delivery.objects.filter(task_id=task_id).update(submitted_at=timezone.now() - timedelta(hours=73))
    assert deliveries_release_due() == 1
    assert Task.objects.get(id=task_id).status == TaskStatus.COMPLETED
    assert bob_api.get(f"/api/v1/tasks/{task_id}").json()["status"] == "completed"  # the seller keeps the history
    # Events of the seller's work went to the seller; none to the closed poster's subscription.
    assert not WebhookDelivery.objects.filter(subscription_id=subscription_id).exists()


# --- Teams ---------------------------------------------------------------------------------------------


def test_its_team_is_cancelled_at_the_period_end_at_the_provider(alice_api, django_capture_on_commit_callbacks):
    team = hire(alice_api)
    assert team["status"] == TeamStatus.ACTIVE

    with django_capture_on_commit_callbacks(execute=True):
        assert close(alice_api).status_code == 204

    stored = Team.objects.get(id=team["id"])
    subscription = LocalSubscription.objects.get(id=stored.payments_subscription_id)
    assert subscription.cancel_at_period_end is True
    assert (stored.status, stored.subscription_ends_at) == (TeamStatus.CANCELLING, subscription.current_period_end)
    assert teams_cancel_ended(now=subscription.current_period_end + timedelta(seconds=1)) == 1
    assert Team.objects.get(id=team["id"]).status == TeamStatus.CANCELLED


def _hired_and_paid_on_stripe(client, stripe) -> Team:
    team = Team.objects.get(id=hire(client)["id"])
    subscription_id = stripe.sessions[team.payments_subscription_id]["subscription"]
    team_link_subscription(subscription_id=subscription_id, session_id=team.payments_subscription_id)
    Team.objects.filter(id=team.id).update(status=TeamStatus.ACTIVE)  # as customer.subscription.* says
    return Team.objects.get(id=team.id)


def test_the_provider_hears_the_cancel_once_however_the_close_is_retried(
    alice, stripe, django_capture_on_commit_callbacks
):
    client = client_with_token(jwt_for(alice))
    team = _hired_and_paid_on_stripe(client, stripe)
    racing = User.objects.get(pk=alice.pk)  # a second close, loaded before the first committed

    with django_capture_on_commit_callbacks(execute=True):
        assert close(client).status_code == 204
    with django_capture_on_commit_callbacks(execute=True):
        user_delete(user=racing, current_password=DEFAULT_PASSWORD, client_ip="127.0.0.1")  # finds it closed
    assert close(client).status_code == 401  # the client retries: the account is gone
    cancel_closed_account_team(str(team.id))  # the job delivered twice
    assert teams_wind_down_catch_up(now=timezone.now() + timedelta(hours=1)) == 0  # recorded: not asked again

    path = f"/v1/subscriptions/{team.payments_subscription_id}"
    assert stripe.keys(path) == [f"team-cancel:{team.id}"]
    assert stripe.subscriptions[team.payments_subscription_id]["cancel_at_period_end"] is True
    stored = Team.objects.get(id=team.id)
    assert stored.status == TeamStatus.CANCELLING and stored.subscription_ends_at is not None


def test_a_cancel_the_provider_failed_is_asked_again_by_the_hourly_job(
    alice, stripe, django_capture_on_commit_callbacks
):
    client = client_with_token(jwt_for(alice))
    team = _hired_and_paid_on_stripe(client, stripe)
    stripe.fail_next = [500]

    with django_capture_on_commit_callbacks(execute=True):
        assert close(client).status_code == 204  # the close does not wait for the provider

    stored = Team.objects.get(id=team.id)
    assert (stored.status, stored.subscription_ends_at) == (TeamStatus.CANCELLING, None)  # claimed, not recorded
    assert teams_wind_down_catch_up() == 0  # too fresh: the queued job may still be on its way
    assert teams_wind_down_catch_up(now=timezone.now() + timedelta(hours=1)) == 1
    assert Team.objects.get(id=team.id).subscription_ends_at is not None
    keys = stripe.keys(f"/v1/subscriptions/{team.payments_subscription_id}")
    assert keys == [f"team-cancel:{team.id}"] * 2  # the same request again
    assert stripe.subscriptions[team.payments_subscription_id]["cancel_at_period_end"] is True
