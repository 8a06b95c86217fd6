"""Hire, unsubscribe and reactivate ask the provider outside any transaction: nothing is locked while it
answers, hire's subscription is created under `team-hire:<team id>`, and a failure changes nothing.

The Stripe adapter talks to a stand-in server (tests/support/stripe_server.py) that honours Idempotency-Key.
"""

from __future__ import annotations

import threading
import time

import pytest
from django.db import connection, transaction

from teams.models import Team, TeamStatus
from teams.services import team_link_subscription
from tests.conftest import client_with_token, jwt_for
from tests.support.stripe_server import stripe_stand_in
from webhooks_app.models import WebhookEvent


@pytest.fixture
def stripe(settings):
    with stripe_stand_in(settings) as state:
        yield state


def _hire(client):
    return client.post("/api/v1/teams", {"team_type": "seo", "display_name": "SEO", "tier": "growth"}, format="json")


def _hired_and_paid(client, stripe) -> dict:
    """Hire, then the customer pays on Stripe's page: the session's subscription is linked, the team active."""
    team = _hire(client).json()
    stored = Team.objects.get(id=team["id"])
    subscription_id = stripe.sessions[stored.payments_subscription_id]["subscription"]
    team_link_subscription(subscription_id=subscription_id, session_id=stored.payments_subscription_id)
    Team.objects.filter(id=team["id"]).update(status=TeamStatus.ACTIVE)  # as customer.subscription.* says
    return team


@pytest.mark.django_db
def test_hire_creates_the_subscription_under_a_key_derived_from_the_team(alice_api, stripe):
    response = _hire(alice_api)

    assert response.status_code == 201, response.content
    team = Team.objects.get(id=response.json()["id"])
    assert stripe.keys("/v1/checkout/sessions") == [f"team-hire:{team.id}"]
    [customer_key] = stripe.keys("/v1/customers")
    assert customer_key.startswith("customer:")  # one Stripe customer per e-mail, however many teams
    session = stripe.sessions[team.payments_subscription_id]
    assert stripe.subscriptions[session["subscription"]]["metadata"]["team_id"] == str(team.id)


@pytest.mark.django_db
def test_a_hire_the_provider_refuses_saves_nothing(alice_api, stripe):
    stripe.fail_next = [400]

    response = _hire(alice_api)

    assert (response.status_code, response.json()["code"]) == (502, "provider_error")
    assert Team.objects.count() == 0
    assert WebhookEvent.objects.count() == 0


@pytest.mark.django_db
def test_an_unsubscribe_the_provider_refuses_leaves_the_team_active(alice_api, stripe):
    team = _hired_and_paid(alice_api, stripe)
    stripe.fail_next = [500]

    response = alice_api.post(f"/api/v1/teams/{team['id']}/unsubscribe")

    assert response.status_code == 502
    stored = Team.objects.get(id=team["id"])
    assert (stored.status, stored.subscription_ends_at) == (TeamStatus.ACTIVE, None)
    assert alice_api.post(f"/api/v1/teams/{team['id']}/unsubscribe").status_code == 200


@pytest.mark.django_db(transaction=True)
def test_while_the_provider_answers_a_reactivation_the_team_is_not_locked_and_a_second_one_is_409(alice, stripe):
    client = client_with_token(jwt_for(alice))
    team = _hired_and_paid(client, stripe)
    assert client.post(f"/api/v1/teams/{team['id']}/unsubscribe").status_code == 200
    stripe.hold = threading.Event()
    answers = {}

    def reactivate():
        try:
            answers["first"] = client_with_token(jwt_for(alice)).post(f"/api/v1/teams/{team['id']}/reactivate")
        finally:
            connection.close()

    thread = threading.Thread(target=reactivate)
    thread.start()
    try:
        assert stripe.held.wait(10), "the provider was never asked"
        with transaction.atomic():
            Team.objects.select_for_update(nowait=True).get(id=team["id"])  # nobody holds the row
        started = time.monotonic()
        second = client.post(f"/api/v1/teams/{team['id']}/reactivate")
        assert (second.status_code, second.json()["code"]) == (409, "invalid_state")
        assert time.monotonic() - started < 5  # answered at once, not after the provider call
    finally:
        stripe.hold.set()
    thread.join(30)

    assert answers["first"].status_code == 200, answers["first"].content
    stored = Team.objects.get(id=team["id"])
    assert (stored.status, stored.subscription_ends_at) == (TeamStatus.ACTIVE, None)
    assert stripe.subscriptions[stored.payments_subscription_id]["cancel_at_period_end"] is False
    updates = [p for m, p, _ in stripe.requests if m == "POST" and p.startswith("/v1/subscriptions/")]
    assert len(updates) == 2  # the unsubscribe and one reactivation
