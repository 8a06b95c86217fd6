"""The simulator's additions (docs/decisions.md#ad-simulator-platforms): platform defaults, saturation, margin,
the optimal budget, the confidence range, rounding and the CSV, each with figures worked out by hand; and a
regression table showing that a request without the new inputs gets exactly the contract's figures."""

from __future__ import annotations

import csv
import io
import math

import pytest

from brands.domain.simulator import Metrics, contract_clicks, optimal_budget, saturate, simulate

pytestmark = pytest.mark.django_db

SIMULATE = "/api/v1/ads/simulate"
LN2 = math.log(2)
EXAMPLE = {"cpc": 2, "ctr": 0.05, "conversion_rate": 0.1, "avg_order_value": 50}
CONTRACT_FIGURES = (
    "monthly_budget",
    "estimated_impressions",
    "estimated_clicks",
    "estimated_conversions",
    "estimated_revenue",
    "estimated_roas",
)


def _body(metrics=None, **extra):
    return {
        "platform": "google",
        "current_daily_budget": 100,
        "current_metrics": dict(EXAMPLE) if metrics is None else metrics,
        "budget_scenarios": [50, 100, 300],
        **extra,
    }


def _post(client, body, **headers):
    response = client.post(SIMULATE, body, format="json", **headers)
    assert response.status_code == 200, response.content
    return response.json()


# --- Regression: no new input, the contract's figures to the cent ------------------------------------------------

# (platform, B, cpc, ctr, conversion_rate, avg_order_value, b) -> monthly, impressions, clicks, conversions,
# revenue, roas; worked out from clicks = (B / cpc) · ln(1 + b/B) / ln 2 and the contract's other formulas.
REGRESSION = [
    (("google", 100, 2, 0.05, 0.1, 50, 300), (9120.0, 2000.0, 100.0, 10.0, 500.0, 1.67)),
    (("meta", 37.3, 0.73, 0.0137, 0.031, 41.9, 99.99), (3039.7, 7011.62, 96.06, 2.98, 124.77, 1.25)),
    (("linkedin", 250, 5.26, 0.0044, 0.06, 120, 1000), (30400.0, 25081.32, 110.36, 6.62, 794.58, 0.79)),
    (("a platform we do not know", 1, 0.5, 1, 1, 0, 0.01), (0.3, 0.03, 0.03, 0.03, 0.0, 0.0)),
]


@pytest.mark.parametrize(("inputs", "expected"), REGRESSION)
def test_without_the_new_inputs_the_contract_figures_are_unchanged(alice_api, inputs, expected):
    platform, B, cpc, ctr, cr, aov, b = inputs
    metrics = {"cpc": cpc, "ctr": ctr, "conversion_rate": cr, "avg_order_value": aov}
    body = _post(
        alice_api,
        {"platform": platform, "current_daily_budget": B, "current_metrics": metrics, "budget_scenarios": [b]},
    )

    [scenario] = body["scenarios"]
    assert tuple(scenario[key] for key in CONTRACT_FIGURES) == expected
    assert body["platform"] == platform
    assert (scenario["saturated"], body["inventory_ceiling_clicks"], body["margin"]) == (False, None, 1.0)
    assert body["defaults_used"] == []
    assert body["baseline_metrics"]["estimated_clicks"] == round(B / cpc, 2)
    assert body["recommendation"].startswith(f"Spend ${b:,.2f} per day (the only scenario")


# --- Platform defaults --------------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("platform", "profile", "cpc", "ctr", "conversion_rate", "clicks_at_B"),
    [
        ("google", "google", 2.69, 0.0317, 0.0375, 37.17),  # 100 / 2.69
        ("meta", "meta", 1.72, 0.009, 0.0921, 58.14),
        ("linkedin", "linkedin", 5.26, 0.0044, 0.06, 19.01),
        ("tiktok", "tiktok", 1.0, 0.0084, 0.015, 100.0),
        ("microsoft", "microsoft", 1.54, 0.0283, 0.0294, 64.94),
        ("GOOGLE", "google", 2.69, 0.0317, 0.0375, 37.17),  # case is ignored (and echoed as sent)
        ("facebook", "meta", 1.72, 0.009, 0.0921, 58.14),
        ("bing", "microsoft", 1.54, 0.0283, 0.0294, 64.94),
    ],
)
def test_a_documented_platform_fills_in_the_metrics_left_out(
    alice_api, platform, profile, cpc, ctr, conversion_rate, clicks_at_B
):
    body = _post(alice_api, _body({"avg_order_value": 10}, platform=platform))

    baseline = body["baseline_metrics"]
    assert (body["platform"], body["platform_profile"]) == (platform, profile)
    assert body["defaults_used"] == ["cpc", "ctr", "conversion_rate"]
    assert (baseline["cpc"], baseline["ctr"], baseline["conversion_rate"]) == (cpc, ctr, conversion_rate)
    assert baseline["estimated_clicks"] == clicks_at_B
    assert baseline["estimated_revenue"] == round(100 / cpc * conversion_rate * 10, 2)


def test_a_metric_sent_wins_over_the_platforms_default(alice_api):
    body = _post(alice_api, _body({"cpc": 2, "avg_order_value": 50}))

    assert body["defaults_used"] == ["ctr", "conversion_rate"]
    assert body["baseline_metrics"]["estimated_clicks"] == 50.0  # 100 / 2, the cpc sent
    assert body["baseline_metrics"]["estimated_impressions"] == round(50 / 0.0317, 2)


def test_the_same_metrics_give_the_same_figures_on_any_platform(alice_api):
    """The platform changes nothing but the defaults: with all four metrics sent, Google and LinkedIn agree."""
    google, linkedin = (_post(alice_api, _body(platform=p)) for p in ("google", "linkedin"))

    assert google["scenarios"] == linkedin["scenarios"]
    assert (google["platform_profile"], linkedin["platform_profile"]) == ("google", "linkedin")


def test_an_unknown_platform_is_accepted_and_echoed_but_has_no_defaults(alice_api):
    known = _post(alice_api, _body(platform="snapchat"))
    missing = alice_api.post(SIMULATE, _body({"avg_order_value": 10}, platform="snapchat"), format="json")

    assert (known["platform"], known["platform_profile"]) == ("snapchat", "other")
    assert missing.status_code == 422
    assert [(e["type"], e["loc"]) for e in missing.json()["detail"]] == [
        ("missing", ["body", "current_metrics", name]) for name in ("cpc", "ctr", "conversion_rate")
    ]


# --- Saturation ---------------------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("clicks", "ceiling", "expected", "bent"),
    [
        (50, 100, 50, False),
        (80, 100, 80, False),  # the knee, 0.8 · C: still the contract's curve
        (90, 100, 87.869, True),  # 100 - 20 · exp(-10 / 20)
        (100, 100, 92.642, True),  # 100 - 20 · exp(-1)
        (1e6, 100, 100.0, True),  # flat at the ceiling
    ],
)
def test_saturation_follows_the_curve_to_the_knee_then_flattens_towards_the_ceiling(clicks, ceiling, expected, bent):
    value, saturated = saturate(clicks, ceiling)

    assert (round(value, 3), saturated) == (expected, bent)
    assert value <= ceiling


def test_saturation_with_the_platforms_ceiling_flattens_a_hundredfold_budget(alice_api):
    """google's ceiling is 4 times today's clicks (100 / 2 = 50): 200 clicks, knee 160. 1000 times the budget gives
    498.36 clicks on the contract's curve, 200 - 40 · exp(-(498.36 - 160) / 40) = 199.99 with saturation."""
    plain = _post(alice_api, _body(budget_scenarios=[300, 100_000]))
    capped = _post(alice_api, _body(budget_scenarios=[300, 100_000], saturation=True))

    assert [s["estimated_clicks"] for s in plain["scenarios"]] == [100.0, 498.36]
    assert [s["estimated_clicks"] for s in capped["scenarios"]] == [100.0, 199.99]
    assert [s["saturated"] for s in capped["scenarios"]] == [False, True]
    assert capped["inventory_ceiling_clicks"] == 200.0
    assert capped["scenarios"][1]["estimated_revenue"] == round(199.99152 * 0.1 * 50, 2)
    assert capped["scenarios"][0] == plain["scenarios"][0]  # below the knee nothing changes


def test_an_explicit_ceiling_is_used_on_any_platform(alice_api):
    body = _post(alice_api, _body(platform="snapchat", inventory_ceiling_clicks=100))

    clicks = [s["estimated_clicks"] for s in body["scenarios"]]
    assert clicks == [29.25, 50.0, 92.64]  # 300 gives 100 contract clicks, past the knee of 80
    assert body["scenarios"][2]["estimated_conversions"] == 9.26
    assert body["scenarios"][2]["confidence_range"]["clicks_high"] == 100.0  # the band stops at the ceiling


# --- Optimal budget and margin ------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("B", "cpc", "cr", "aov", "margin", "expected"),
    [
        (100, 2, 0.1, 50, 1, 260.67),  # 100 · (5 / (2 ln 2) - 1)
        (100, 2, 0.1, 50, 0.5, 80.34),  # 100 · (2.5 / (2 ln 2) - 1)
        (50, 1, 0.05, 100, 1, 310.67),  # 50 · (5 / ln 2 - 1)
        (100, 2, 0.1, 50, 0.2, 0.0),  # 1 / (2 ln 2) < 1: no budget is profitable
        (100, 2, 0, 50, 1, 0.0),
        (100, 0.01, 1, 1e12, 1, 1e9),  # beyond the simulator's range: its top
    ],
)
def test_the_optimal_budget_is_the_closed_form(B, cpc, cr, aov, margin, expected):
    metrics = Metrics(cpc=cpc, ctr=0.05, conversion_rate=cr, avg_order_value=aov)
    closed_form = max(0.0, min(B * (margin * cr * aov / (cpc * LN2) - 1), 1e9))

    assert round(optimal_budget(B, metrics, margin=margin), 2) == expected == round(closed_form, 2)


def test_the_optimal_budget_with_saturation_is_the_top_of_the_profit_curve():
    """Ceiling 100 clicks: found by a search, checked against a scan of the profit every cent from 0 to 400."""
    metrics = Metrics(cpc=2, ctr=0.05, conversion_rate=0.1, avg_order_value=50)

    def profit(b):
        return saturate(contract_clicks(b, 100, 2), 100)[0] * 5 - b

    found = optimal_budget(100, metrics, ceiling=100)
    scanned = max((cents / 100 for cents in range(40_000)), key=profit)

    assert round(found, 2) == 214.8 == scanned
    assert found < 260.67  # the ceiling pulls the optimum below the unbent one


def test_the_answer_names_the_optimum_and_margin_weighs_profit_but_not_the_recommendation(alice_api):
    full = _post(alice_api, _body())
    half = _post(alice_api, _body(margin=0.5))
    none = _post(alice_api, _body(margin=0.2))

    assert (full["optimal_daily_budget"], half["optimal_daily_budget"], none["optimal_daily_budget"]) == (
        260.67,
        80.34,
        0.0,
    )
    assert none["optimal_note"].startswith("No budget is profitable")
    # profit at 260.67: 50 · log2(3.6067) · 5 - 260.67
    assert full["optimal_daily_profit"] == round(50 * math.log2(1 + 260.67376 / 100) * 5 - 260.67376, 2)
    assert [s["estimated_profit"] for s in half["scenarios"]] == [23.12, 25.0, -50.0]  # 0.5 · revenue - b
    assert half["recommendation"] == full["recommendation"]  # still revenue - spend, the contract's rule
    assert "$200.00 per day" in half["recommendation"]


def test_an_optimum_beyond_range_is_capped_not_refused(alice_api):
    body = _post(alice_api, _body({"cpc": 0.01, "ctr": 0.05, "conversion_rate": 1, "avg_order_value": 1e12}))

    assert body["optimal_daily_budget"] == 1e9
    assert "top of the simulator's range" in body["optimal_note"]


# --- Confidence range and rounding -------------------------------------------------------------------------------


def test_the_confidence_range_widens_with_the_distance_from_todays_budget(alice_api):
    """w = 0.1 + 0.25 · |ln r|: at 50 of 100, w = 0.2733 and the clicks 29.248 give 29.248 · exp(∓w)."""
    body = _post(alice_api, _body())

    half, today, triple = (s["confidence_range"] for s in body["scenarios"])
    assert half == {
        "width": 0.27,
        "clicks_low": 22.25,
        "clicks_high": 38.44,
        "revenue_low": 111.27,  # 22.2542 · 0.1 · 50
        "revenue_high": 192.2,
    }
    assert (today["clicks_low"], today["clicks_high"]) == (45.24, 55.26)  # 50 · exp(∓0.1)
    assert triple["width"] == round(0.1 + 0.25 * math.log(3), 2)
    assert [s["confidence"] for s in body["scenarios"]] == ["medium", "high", "low"]  # unchanged beside it


def test_each_figure_is_rounded_once_from_unrounded_figures():
    """0.004 conversions round to 0.00, while the revenue they bring, 0.004 · 3125 = 12.50, is kept."""
    result = simulate(
        platform="google",
        current_daily_budget=100,
        metrics=Metrics(cpc=100, ctr=0.5, conversion_rate=0.004, avg_order_value=3125),
        budget_scenarios=[100],
    )

    [scenario] = result["scenarios"]
    assert (scenario["estimated_clicks"], scenario["estimated_conversions"], scenario["estimated_revenue"]) == (
        1.0,
        0.0,
        12.5,
    )
    # 12.5 / 100 = 0.125 exactly, from the unrounded revenue; Python's round sends an exact tie to the even cent.
    assert scenario["estimated_roas"] == 0.12


# --- CSV ----------------------------------------------------------------------------------------------------------


def test_the_csv_carries_the_new_figures_beside_the_contracts(alice_api):
    body = _body(budget_scenarios=[300, 100_000], saturation=True, margin=0.5)
    as_json = _post(alice_api, body)
    response = alice_api.post(SIMULATE, body, format="json", HTTP_ACCEPT="text/csv")

    assert response["Content-Type"] == "text/csv; charset=utf-8"
    rows = list(csv.DictReader(io.StringIO(response.content.decode())))
    assert [row["row"] for row in rows] == ["baseline", "scenario", "scenario"]
    for row, scenario in zip(rows[1:], as_json["scenarios"], strict=True):
        assert float(row["estimated_clicks"]) == scenario["estimated_clicks"]
        assert float(row["estimated_profit"]) == scenario["estimated_profit"]
        assert row["saturated"] == str(scenario["saturated"]).lower()
        assert float(row["confidence_clicks_low"]) == scenario["confidence_range"]["clicks_low"]
        assert float(row["confidence_revenue_high"]) == scenario["confidence_range"]["revenue_high"]
    assert "confidence_range" not in rows[0]


# --- Bad values of the new inputs: 422 in the contract's shape ---------------------------------------------------


@pytest.mark.parametrize(
    ("extra", "loc", "type_", "ctx"),
    [
        ({"margin": 0}, ["body", "margin"], "greater_than", {"gt": 0}),
        ({"margin": 1.5}, ["body", "margin"], "less_than_equal", {"le": 1}),
        ({"margin": "most"}, ["body", "margin"], "float_parsing", None),
        ({"inventory_ceiling_clicks": 0}, ["body", "inventory_ceiling_clicks"], "greater_than", {"gt": 0}),
        ({"inventory_ceiling_clicks": 1e13}, ["body", "inventory_ceiling_clicks"], "less_than_equal", {"le": 1e12}),
        ({"saturation": "maybe"}, ["body", "saturation"], "bool_parsing", None),
        (
            {"saturation": False, "inventory_ceiling_clicks": 100},
            ["body", "inventory_ceiling_clicks"],
            "value_error",
            {"error": "an inventory ceiling needs saturation, not `saturation: false`"},
        ),
        (
            {"saturation": True, "platform": "snapchat"},
            ["body", "saturation"],
            "value_error",
            {"error": "platform 'snapchat' has no default inventory ceiling: send inventory_ceiling_clicks"},
        ),
        ({"platfrom": "google"}, ["body", "platfrom"], "extra_forbidden", None),
    ],
)
def test_bad_values_of_the_new_inputs_are_422(alice_api, extra, loc, type_, ctx):
    response = alice_api.post(SIMULATE, _body(**extra), format="json")

    assert response.status_code == 422, response.content
    [problem] = response.json()["detail"]
    assert (problem["loc"], problem["type"], problem.get("ctx")) == (loc, type_, ctx)


@pytest.mark.parametrize(
    ("extra", "status"),
    [
        ({"inventory_ceiling_clicks": 5e-324}, 200),  # 0.8 · C rounds to C: the bend is a corner, not 0 / 0
        ({"current_daily_budget": 1e-290, "budget_scenarios": [1e9], "inventory_ceiling_clicks": 1}, 200),
        ({"current_daily_budget": 1e-290, "budget_scenarios": [1e9]}, 200),  # a band of w = 172: clicks_high huge
        ({"current_metrics": {**EXAMPLE, "cpc": 1e-300, "ctr": 1e-300}, "saturation": True}, 422),
    ],
)
def test_extreme_new_inputs_are_answered_never_500(alice_api, extra, status):
    response = alice_api.post(SIMULATE, {**_body(), **extra}, format="json")

    assert response.status_code == status, response.content
    if status == 200:
        band = response.json()["scenarios"][-1]["confidence_range"]
        assert band["width"] is not None and band["clicks_low"] <= (band["clicks_high"] or math.inf)
