from __future__ import annotations

import pytest

pytestmark = pytest.mark.django_db

SIMULATE = "/api/v1/ads/simulate"


def _body(**overrides):
    body = {
        "platform": "google",
        "current_daily_budget": 100,
        "current_metrics": {"cpc": 2, "ctr": 0.05, "conversion_rate": 0.1, "avg_order_value": 50},
        "budget_scenarios": [50, 100, 300],
    }
    for key, value in overrides.items():
        if key in body["current_metrics"]:
            body["current_metrics"][key] = value
        else:
            body[key] = value
    return body


@pytest.mark.parametrize("client", ["alice_api", "alice_key_api"])
def test_it_simulates_with_a_jwt_or_an_api_key(request, client):
    response = request.getfixturevalue(client).post(SIMULATE, _body(), format="json")

    assert response.status_code == 200, response.content
    body = response.json()
    assert body["platform"] == "google"
    assert [s["estimated_clicks"] for s in body["scenarios"]] == [29.25, 50.0, 100.0]
    assert [s["confidence"] for s in body["scenarios"]] == ["medium", "high", "low"]
    assert [s["estimated_revenue"] for s in body["scenarios"]] == [146.24, 250.0, 500.0]
    assert [s["estimated_impressions"] for s in body["scenarios"]] == [584.96, 1000.0, 2000.0]
    assert [s["estimated_conversions"] for s in body["scenarios"]] == [2.92, 5.0, 10.0]
    assert [s["estimated_roas"] for s in body["scenarios"]] == [2.92, 2.5, 1.67]
    assert [s["monthly_budget"] for s in body["scenarios"]] == [1520.0, 3040.0, 9120.0]
    assert body["baseline_metrics"]["estimated_clicks"] == 50.0
    assert body["baseline_metrics"]["cpc"] == 2.0
    assert "$300.00" in body["recommendation"]


def test_anonymous_is_401(api):
    assert api.post(SIMULATE, _body(), format="json").status_code == 401


def test_no_scenarios_is_too_short(alice_api):
    response = alice_api.post(SIMULATE, _body(budget_scenarios=[]), format="json")

    assert response.status_code == 422
    assert response.json()["detail"] == [
        {
            "type": "too_short",
            "loc": ["body", "budget_scenarios"],
            "msg": "List should have at least 1 item after validation, not 0",
            "input": [],
            "ctx": {"field_type": "List", "min_length": 1, "actual_length": 0},
        }
    ]


def test_21_scenarios_is_too_long(alice_api):
    response = alice_api.post(SIMULATE, _body(budget_scenarios=[10] * 21), format="json")

    assert response.status_code == 422
    assert response.json()["detail"] == [
        {
            "type": "too_long",
            "loc": ["body", "budget_scenarios"],
            "msg": "List should have at most 20 items after validation, not 21",
            "input": [10] * 21,
            "ctx": {"field_type": "List", "max_length": 20, "actual_length": 21},
        }
    ]


def test_twenty_scenarios_are_fine(alice_api):
    response = alice_api.post(SIMULATE, _body(budget_scenarios=list(range(1, 21))), format="json")

    assert response.status_code == 200
    assert len(response.json()["scenarios"]) == 20


@pytest.mark.parametrize(
    ("override", "loc", "type_", "ctx"),
    [
        ({"cpc": 0}, ["body", "current_metrics", "cpc"], "greater_than", {"gt": 0}),
        ({"ctr": 0}, ["body", "current_metrics", "ctr"], "greater_than", {"gt": 0}),
        ({"ctr": 1.5}, ["body", "current_metrics", "ctr"], "less_than_equal", {"le": 1}),
        ({"conversion_rate": -0.1}, ["body", "current_metrics", "conversion_rate"], "greater_than_equal", {"ge": 0}),
        ({"conversion_rate": 1.1}, ["body", "current_metrics", "conversion_rate"], "less_than_equal", {"le": 1}),
        ({"avg_order_value": -1}, ["body", "current_metrics", "avg_order_value"], "greater_than_equal", {"ge": 0}),
        ({"current_daily_budget": 0}, ["body", "current_daily_budget"], "greater_than", {"gt": 0}),
        ({"budget_scenarios": [10, 0]}, ["body", "budget_scenarios", 1], "greater_than", {"gt": 0}),
        ({"budget_scenarios": [10, "a lot"]}, ["body", "budget_scenarios", 1], "float_parsing", None),
    ],
)
def test_bounds_are_validated(alice_api, override, loc, type_, ctx):
    response = alice_api.post(SIMULATE, _body(**override), format="json")

    assert response.status_code == 422
    [problem] = response.json()["detail"]
    assert (problem["loc"], problem["type"]) == (loc, type_)
    assert problem.get("ctx") == ctx


def test_all_problems_are_reported_together(alice_api):
    response = alice_api.post(SIMULATE, {"current_metrics": {"cpc": -1}}, format="json")

    assert response.status_code == 422
    locs = sorted(tuple(e["loc"]) for e in response.json()["detail"])
    assert locs == [
        ("body", "budget_scenarios"),
        ("body", "current_daily_budget"),
        ("body", "current_metrics", "avg_order_value"),
        ("body", "current_metrics", "conversion_rate"),
        ("body", "current_metrics", "cpc"),
        ("body", "current_metrics", "ctr"),
        ("body", "platform"),
    ]


def test_inputs_too_extreme_to_project_are_422_not_500(alice_api):
    response = alice_api.post(SIMULATE, _body(cpc=1e-300, ctr=1e-300), format="json")

    assert response.status_code == 422
    assert response.json()["detail"][0]["loc"] == ["body"]
    assert response.json()["detail"][0]["type"] == "value_error"
