"""The team's cadence (docs/decisions.md#team-cadence): a validated shape at create and update, `{}` meaning no
recurring research."""

from __future__ import annotations

import pytest

pytestmark = pytest.mark.django_db


@pytest.mark.parametrize(
    ("cadence", "status"),
    [
        ({}, None),
        ({"research_every_hours": 24}, None),
        ({"research_every_hours": 1}, None),
        ({"research_every_hours": 720}, None),
        ({"research_every_hours": 0}, 422),
        ({"research_every_hours": 721}, 422),
        ({"research_every_hours": "daily"}, 422),
        ({"research_every_hours": 24, "publish_every_hours": 6}, 422),
        ("every day", 422),
        ([24], 422),
    ],
)
def test_cadence_is_validated_at_create_and_update(alice_api, cadence, status):
    body = {"team_type": "content", "display_name": "Crew", "orchestrator_cadence": cadence}
    created = alice_api.post("/api/v1/teams", body, format="json")
    team = alice_api.post("/api/v1/teams", {"team_type": "content", "display_name": "Crew"}, format="json").json()
    updated = alice_api.patch(f"/api/v1/teams/{team['id']}", {"orchestrator_cadence": cadence}, format="json")

    assert team["orchestrator_cadence"] == {}
    assert created.status_code == (status or 201), created.content
    assert updated.status_code == (status or 200), updated.content
    if status is None:
        assert created.json()["orchestrator_cadence"] == cadence
        assert updated.json()["orchestrator_cadence"] == cadence
    else:
        assert updated.json()["detail"][0]["loc"][:2] == ["body", "orchestrator_cadence"]
