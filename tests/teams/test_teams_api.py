from __future__ import annotations

import uuid
from datetime import timedelta

import pytest
from django.utils import timezone

from payments.models import LocalSubscription
from teams.models import Team, TeamStatus
from teams.services import teams_cancel_ended

pytestmark = pytest.mark.django_db


def hire(client, **overrides) -> dict:
    body = {"team_type": "content", "display_name": "Content crew", "tier": "growth", **overrides}
    response = client.post("/api/v1/teams", body, format="json")
    assert response.status_code == 201, response.content
    return response.json()


def test_hire_creates_an_active_team_on_a_new_subscription(alice_api, alice):
    team = hire(alice_api)

    assert team["status"] == "active"
    assert team["tier"] == "growth"
    assert team["payments_subscription_id"].startswith("sub_")
    assert team["hired_at"] is not None
    assert team["workflow_phase_label"] == "Discovery"
    subscription = LocalSubscription.objects.get(id=team["payments_subscription_id"])
    assert subscription.metadata["team_id"] == team["id"]
    assert Team.objects.get(id=team["id"]).owner == alice


def test_the_whole_subscription_lifecycle(alice_api):
    team = hire(alice_api)
    url = f"/api/v1/teams/{team['id']}"

    unsubscribed = alice_api.post(f"{url}/unsubscribe").json()
    assert unsubscribed["status"] == "cancelling"
    ends_at = unsubscribed["subscription_ends_at"]
    assert ends_at is not None
    assert LocalSubscription.objects.get(id=team["payments_subscription_id"]).cancel_at_period_end is True

    reactivated = alice_api.post(f"{url}/reactivate")
    assert reactivated.status_code == 200
    assert reactivated.json()["status"] == "active"
    assert reactivated.json()["subscription_ends_at"] is None
    assert LocalSubscription.objects.get(id=team["payments_subscription_id"]).cancel_at_period_end is False

    again = alice_api.post(f"{url}/unsubscribe").json()
    assert again["status"] == "cancelling"

    Team.objects.filter(id=team["id"]).update(subscription_ends_at=timezone.now() - timedelta(seconds=1))
    assert teams_cancel_ended() == 1
    assert teams_cancel_ended() == 0  # idempotent

    final = alice_api.get(url).json()
    assert final["status"] == "cancelled"
    assert final["cancelled_at"] is not None


@pytest.mark.parametrize(
    ("status", "action"),
    [
        (TeamStatus.ACTIVE, "reactivate"),
        (TeamStatus.PAUSED, "reactivate"),
        (TeamStatus.CANCELLED, "reactivate"),
        (TeamStatus.CANCELLING, "unsubscribe"),
        (TeamStatus.CANCELLED, "unsubscribe"),
        (TeamStatus.PAST_DUE, "unsubscribe"),
    ],
)
def test_refused_transitions_are_409_and_change_nothing(alice_api, status, action):
    team = hire(alice_api)
    ends_at = timezone.now() + timedelta(days=3) if status == TeamStatus.CANCELLING else None
    Team.objects.filter(id=team["id"]).update(status=status, subscription_ends_at=ends_at)
    before = Team.objects.get(id=team["id"])

    response = alice_api.post(f"/api/v1/teams/{team['id']}/{action}")

    assert response.status_code == 409
    assert response.json()["code"] == "invalid_state"
    after = Team.objects.get(id=team["id"])
    assert (after.status, after.subscription_ends_at, after.updated_at) == (
        before.status,
        before.subscription_ends_at,
        before.updated_at,
    )


def test_reactivate_after_the_period_ended_is_409(alice_api):
    team = hire(alice_api)
    alice_api.post(f"/api/v1/teams/{team['id']}/unsubscribe")
    Team.objects.filter(id=team["id"]).update(subscription_ends_at=timezone.now() - timedelta(minutes=1))

    response = alice_api.post(f"/api/v1/teams/{team['id']}/reactivate")

    assert response.status_code == 409
    assert Team.objects.get(id=team["id"]).status == TeamStatus.CANCELLING
    assert LocalSubscription.objects.get(id=team["payments_subscription_id"]).cancel_at_period_end is True


def test_pause_and_resume(alice_api):
    team = hire(alice_api)
    url = f"/api/v1/teams/{team['id']}"

    paused = alice_api.patch(url, {"status": "paused", "display_name": "Renamed"}, format="json").json()
    assert (paused["status"], paused["display_name"]) == ("paused", "Renamed")
    assert paused["paused_at"] is not None
    assert alice_api.post(f"{url}/unsubscribe").status_code == 409
    resumed = alice_api.patch(url, {"status": "active"}, format="json").json()
    assert resumed["status"] == "active"
    assert resumed["paused_at"] is None


def test_patch_changes_settings_and_validates(alice_api):
    team = hire(alice_api)
    url = f"/api/v1/teams/{team['id']}"

    ok = alice_api.patch(url, {"operation_mode": "autonomous", "config": {"audits": ["seo"]}}, format="json")
    bad = alice_api.patch(url, {"operation_mode": "wild", "status": "cancelled"}, format="json")

    assert ok.status_code == 200
    assert ok.json()["config"] == {"audits": ["seo"]}
    assert bad.status_code == 422
    assert [e["loc"] for e in bad.json()["detail"]] == [["body", "operation_mode"], ["body", "status"]]
    assert Team.objects.get(id=team["id"]).operation_mode == "autonomous"


def test_list_is_the_callers_own_with_a_status_filter(alice_api, bob_api):
    hire(alice_api)
    second = hire(alice_api, display_name="Second")
    hire(bob_api)
    alice_api.post(f"/api/v1/teams/{second['id']}/unsubscribe")

    everything = alice_api.get("/api/v1/teams").json()
    cancelling = alice_api.get("/api/v1/teams?status=cancelling").json()

    assert everything["total"] == 2
    assert [t["id"] for t in cancelling["items"]] == [second["id"]]


def test_list_query_count_does_not_grow_with_rows(alice_api, alice):
    from django.db import connection
    from django.test.utils import CaptureQueriesContext

    def make(n):
        Team.objects.bulk_create(
            Team(owner=alice, team_type="seo", display_name=f"T{i}", status="active") for i in range(n)
        )

    def queries_for_list() -> int:
        with CaptureQueriesContext(connection) as captured:
            response = alice_api.get("/api/v1/teams?limit=100")
        assert response.status_code == 200
        return len(captured), len(response.json()["items"])

    alice_api.get("/api/v1/teams")  # warm-up: loads the rate-limit overrides into the cache
    make(1)
    one = queries_for_list()
    make(24)
    many = queries_for_list()

    assert (one[1], many[1]) == (1, 25)
    assert one[0] == many[0]


@pytest.mark.parametrize(
    ("method", "suffix", "body"),
    [
        ("get", "", None),
        ("patch", "", {"display_name": "x"}),
        ("post", "/unsubscribe", None),
        ("post", "/reactivate", None),
    ],
)
def test_another_users_team_is_404_and_anonymous_is_401(alice_api, bob_api, api, method, suffix, body):
    team = hire(alice_api)
    url = f"/api/v1/teams/{team['id']}{suffix}"

    assert getattr(bob_api, method)(url, body, format="json").status_code == 404
    assert getattr(api, method)(url, body, format="json").status_code == 401
    assert getattr(bob_api, method)(f"/api/v1/teams/{uuid.uuid4()}{suffix}", body, format="json").status_code == 404
    assert Team.objects.get(id=team["id"]).status == TeamStatus.ACTIVE


def test_hire_validates_its_body(alice_api):
    response = alice_api.post("/api/v1/teams", {"team_type": "astronauts"}, format="json")

    assert response.status_code == 422
    assert {tuple(e["loc"]) for e in response.json()["detail"]} == {("body", "team_type"), ("body", "display_name")}
    assert not Team.objects.exists()
