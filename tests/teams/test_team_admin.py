from __future__ import annotations

import pytest

from payments.models import LocalSubscription
from teams.models import Team, TeamStatus

pytestmark = pytest.mark.django_db


def test_teams_list_filters_and_search(admin_client, alice_api):
    alice_api.post("/api/v1/teams", {"team_type": "seo", "display_name": "Findable"}, format="json")

    for query in ("", "?status__exact=active", "?tier__exact=starter", "?q=Findable", "?q=alice"):
        response = admin_client.get(f"/admin/teams/team/{query}", secure=True)
        assert response.status_code == 200
        assert "Findable" in response.content.decode()


def test_admin_unsubscribe_goes_through_the_provider(admin_client, alice_api):
    team_id = alice_api.post("/api/v1/teams", {"team_type": "seo", "display_name": "T"}, format="json").json()["id"]

    response = admin_client.post(
        "/admin/teams/team/", {"action": "unsubscribe", "_selected_action": [team_id]}, secure=True
    )

    assert response.status_code == 302
    team = Team.objects.get(id=team_id)
    assert team.status == TeamStatus.CANCELLING
    assert LocalSubscription.objects.get(id=team.payments_subscription_id).cancel_at_period_end is True
