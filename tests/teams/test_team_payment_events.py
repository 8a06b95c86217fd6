"""Teams follow what the payment provider says, through signed events on the payments webhook."""

from __future__ import annotations

import time
from datetime import timedelta

import pytest
from django.utils import timezone

from payments.provider_events import build_event
from teams.models import Team, TeamStatus

pytestmark = pytest.mark.django_db


def post_event(api, event_type: str, obj: dict, *, created: int | None = None):
    event = build_event(event_type, obj, created=created)
    return api.post(
        "/api/v1/webhooks/payments",
        data=event.body,
        content_type="application/json",
        HTTP_PAYMENTS_SIGNATURE=event.headers["Payments-Signature"],
    )


def subscription_object(team: Team, *, status="active", cancel_at_period_end=False, period_end=None) -> dict:
    period_end = period_end or int(time.time()) + 20 * 86400
    return {
        "id": team.payments_subscription_id,
        "object": "subscription",
        "status": status,
        "cancel_at_period_end": cancel_at_period_end,
        "current_period_end": period_end,
    }


@pytest.fixture
def team(alice_api) -> Team:
    body = alice_api.post("/api/v1/teams", {"team_type": "seo", "display_name": "SEO"}, format="json").json()
    return Team.objects.get(id=body["id"])


def test_subscription_update_without_cancel_moves_a_cancelling_team_back_to_active(api, alice_api, team):
    alice_api.post(f"/api/v1/teams/{team.id}/unsubscribe")

    response = post_event(api, "customer.subscription.updated", subscription_object(team))

    assert response.status_code == 200
    team.refresh_from_db()
    assert team.status == TeamStatus.ACTIVE
    assert team.subscription_ends_at is None


def test_subscription_update_with_cancel_sets_the_end(api, team):
    period_end = int(time.time()) + 5 * 86400

    post_event(
        api,
        "customer.subscription.updated",
        subscription_object(team, cancel_at_period_end=True, period_end=period_end),
    )

    team.refresh_from_db()
    assert team.status == TeamStatus.CANCELLING
    assert int(team.subscription_ends_at.timestamp()) == period_end


def test_an_older_event_after_a_newer_one_changes_nothing(api, team):
    now = int(time.time())
    newer = post_event(
        api, "customer.subscription.updated", subscription_object(team, cancel_at_period_end=True), created=now
    )
    older = post_event(api, "customer.subscription.updated", subscription_object(team), created=now - 60)

    assert newer.status_code == older.status_code == 200
    team.refresh_from_db()
    assert team.status == TeamStatus.CANCELLING


def test_invoice_failure_and_payment_move_between_active_and_past_due(api, team):
    now = int(time.time())
    post_event(
        api, "invoice.payment_failed", {"id": "in_1", "subscription": team.payments_subscription_id}, created=now
    )
    team.refresh_from_db()
    assert team.status == TeamStatus.PAST_DUE

    post_event(api, "invoice.paid", {"id": "in_2", "subscription": team.payments_subscription_id}, created=now + 1)
    team.refresh_from_db()
    assert team.status == TeamStatus.ACTIVE


def test_subscription_deleted_cancels_the_team(api, team):
    post_event(api, "customer.subscription.deleted", subscription_object(team, status="canceled"))

    team.refresh_from_db()
    assert team.status == TeamStatus.CANCELLED
    assert team.cancelled_at is not None


def test_checkout_completed_activates_an_onboarding_team(api, team):
    Team.objects.filter(id=team.id).update(status=TeamStatus.ONBOARDING, hired_at=None)

    post_event(
        api,
        "checkout.session.completed",
        {"id": "cs_1", "object": "checkout.session", "subscription": team.payments_subscription_id},
    )

    team.refresh_from_db()
    assert team.status == TeamStatus.ACTIVE
    assert team.hired_at is not None


def test_events_for_unknown_subscriptions_are_accepted_and_ignored(api, team):
    response = post_event(api, "invoice.paid", {"id": "in_3", "subscription": "sub_unknown"})

    assert response.status_code == 200
    team.refresh_from_db()
    assert team.status == TeamStatus.ACTIVE


def test_expired_cancelling_team_is_not_revived_by_reactivate(alice_api, team):
    Team.objects.filter(id=team.id).update(
        status=TeamStatus.CANCELLING, subscription_ends_at=timezone.now() - timedelta(hours=1)
    )

    assert alice_api.post(f"/api/v1/teams/{team.id}/reactivate").status_code == 409
