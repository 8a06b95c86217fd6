"""Pausing a team pauses its billing (docs/decisions.md#pausing-a-team-pauses-billing).

The provider is told before the team changes: Stripe's `pause_collection` {behavior: void} on pause, cleared on
resume (the stand-in, tests/support/stripe_server.py), the local provider's `collection_paused`. Each call has
a key of the team, the transition and its claim; none is made holding a lock; a failed call leaves the team as
it was, with the provider's error (502 / 503).
"""

from __future__ import annotations

import threading
import time

import pytest
from django.db import connection, transaction

from payments.models import LocalSubscription
from teams.models import Team, TeamStatus
from tests.conftest import client_with_token, jwt_for
from tests.teams.test_team_provider_calls_hold_no_lock import _hired_and_paid
from tests.teams.test_team_provider_calls_hold_no_lock import stripe as stripe  # the fixture


def _patch(client, team_id, **body):
    return client.patch(f"/api/v1/teams/{team_id}", body, format="json")


def _run_state_calls(state):
    return [c for c in state.posts("/v1/subscriptions/") if c.key and c.key.startswith(("team-pause:", "team-resume:"))]


@pytest.mark.django_db
def test_the_local_provider_records_pause_and_resume(alice_api):
    team = alice_api.post("/api/v1/teams", {"team_type": "seo", "display_name": "SEO", "tier": "growth"}).json()
    subscription = LocalSubscription.objects.get(id=team["payments_subscription_id"])

    for status, paused in [("paused", True), ("active", False), ("paused", True)]:
        response = _patch(alice_api, team["id"], status=status)
        assert response.status_code == 200, response.content
        subscription.refresh_from_db()
        assert (response.json()["status"], subscription.collection_paused) == (status, paused)


@pytest.mark.django_db
def test_stripe_is_told_to_void_invoices_while_paused_and_to_collect_again_on_resume(alice_api, stripe):
    team = _hired_and_paid(alice_api, stripe)
    subscription_id = Team.objects.get(id=team["id"]).payments_subscription_id

    paused = _patch(alice_api, team["id"], status="paused", display_name="Quiet")
    assert paused.status_code == 200, paused.content
    assert (paused.json()["status"], paused.json()["display_name"]) == ("paused", "Quiet")
    assert paused.json()["paused_at"] is not None
    assert stripe.subscriptions[subscription_id]["pause_collection"]["behavior"] == "void"

    resumed = _patch(alice_api, team["id"], status="active")
    assert resumed.status_code == 200, resumed.content
    assert (resumed.json()["status"], resumed.json()["paused_at"]) == ("active", None)
    assert stripe.subscriptions[subscription_id]["pause_collection"] is None
    assert _patch(alice_api, team["id"], status="paused").status_code == 200  # and once more

    calls = _run_state_calls(stripe)
    # The resume's `pause_collection=` (empty: cleared) is what set it to None above; parse_qsl drops it here.
    assert [c.form for c in calls] == [
        [("pause_collection[behavior]", "void")],
        [],
        [("pause_collection[behavior]", "void")],
    ]
    kinds = [c.key.rsplit(":", 1)[0] for c in calls]
    assert kinds == [f"team-pause:{team['id']}", f"team-resume:{team['id']}", f"team-pause:{team['id']}"]
    assert len({c.key for c in calls}) == 3  # the second pause is a new request, not a replay of the first
    assert stripe.subscriptions[subscription_id]["pause_collection"]["behavior"] == "void"


@pytest.mark.django_db
@pytest.mark.parametrize(
    ("start", "to", "failure", "status_code"),
    [
        ("active", "paused", 500, 502),  # Stripe answered and failed
        ("active", "paused", 429, 503),  # Stripe is rate limiting
        ("paused", "active", 500, 502),
    ],
)
def test_a_failed_provider_call_leaves_the_team_as_it_was(alice_api, stripe, start, to, failure, status_code):
    team = _hired_and_paid(alice_api, stripe)
    if start == "paused":
        assert _patch(alice_api, team["id"], status="paused").status_code == 200
    before = Team.objects.get(id=team["id"])
    stripe.fail_next = [failure]

    response = _patch(alice_api, team["id"], status=to, display_name="Changed")

    assert response.status_code == status_code, response.content
    assert response.json()["code"] in ("provider_error", "provider_unavailable")
    after = Team.objects.get(id=team["id"])
    assert (after.status, after.paused_at, after.display_name) == (before.status, before.paused_at, "SEO")
    # Nothing is left claimed: the same change goes through when the provider answers again.
    assert _patch(alice_api, team["id"], status=to).json()["status"] == to


@pytest.mark.django_db(transaction=True)
def test_while_the_provider_answers_a_pause_the_team_is_not_locked_and_a_resume_is_409(alice, stripe):
    client = client_with_token(jwt_for(alice))
    team = _hired_and_paid(client, stripe)
    stripe.hold = threading.Event()
    answers = {}

    def pause():
        try:
            answers["pause"] = _patch(client_with_token(jwt_for(alice)), team["id"], status="paused")
        finally:
            connection.close()

    thread = threading.Thread(target=pause)
    thread.start()
    try:
        assert stripe.held.wait(10), "the provider was never asked"
        with transaction.atomic():
            Team.objects.select_for_update(nowait=True).get(id=team["id"])  # nobody holds the row
        started = time.monotonic()
        resume = _patch(client, team["id"], status="active")
        unsubscribe = client.post(f"/api/v1/teams/{team['id']}/unsubscribe")
        assert (resume.status_code, resume.json()["code"]) == (409, "invalid_state")
        assert unsubscribe.status_code == 409
        renamed = _patch(client, team["id"], display_name="Renamed meanwhile")  # settings alone go through
        assert renamed.status_code == 200, renamed.content
        assert time.monotonic() - started < 5  # answered at once, not after the provider call
    finally:
        stripe.hold.set()
    thread.join(30)

    assert answers["pause"].status_code == 200, answers["pause"].content
    stored = Team.objects.get(id=team["id"])
    assert stored.status == TeamStatus.PAUSED and stored.paused_at is not None
    assert stored.display_name == "Renamed meanwhile"
    assert len(_run_state_calls(stripe)) == 1
