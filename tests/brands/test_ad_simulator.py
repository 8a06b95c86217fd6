"""The simulator itself (a pure function): the formula of docs/decisions.md#domain-rules, bands and rounding."""

from __future__ import annotations

import math

import pytest

from brands.domain.simulator import Metrics, SimulationOverflow, confidence, simulate

EXAMPLE = Metrics(cpc=2, ctr=0.05, conversion_rate=0.1, avg_order_value=50)


def by_hand(b: float, B: float = 100, cpc=2, ctr=0.05, cr=0.1, aov=50) -> dict:
    clicks = (B / cpc) * math.log(1 + b / B) / math.log(2)
    revenue = clicks * cr * aov
    return {
        "daily_budget": round(b, 2),
        "monthly_budget": round(b * 30.4, 2),
        "estimated_impressions": round(clicks / ctr, 2),
        "estimated_clicks": round(clicks, 2),
        "estimated_conversions": round(clicks * cr, 2),
        "estimated_revenue": round(revenue, 2),
        "estimated_roas": round(revenue / b, 2),
    }


CONTRACT_FIGURES = (
    "daily_budget",
    "monthly_budget",
    "estimated_impressions",
    "estimated_clicks",
    "estimated_conversions",
    "estimated_revenue",
    "estimated_roas",
)
CONTRACT_KEYS = (*CONTRACT_FIGURES, "confidence", "cpc", "ctr", "conversion_rate", "avg_order_value")


def contract(figures: dict) -> dict:
    """The contract's fields of a scenario or of the baseline, without the additive ones."""
    return {key: value for key, value in figures.items() if key in CONTRACT_KEYS}


def test_the_issue_example():
    result = simulate(platform="google", current_daily_budget=100, metrics=EXAMPLE, budget_scenarios=[50, 100, 300])

    scenarios = [contract(s) for s in result["scenarios"]]  # the additions are pinned in test_ad_simulator_platforms
    assert [s["estimated_clicks"] for s in scenarios] == [29.25, 50.0, 100.0]
    assert [s["confidence"] for s in scenarios] == ["medium", "high", "low"]
    assert scenarios == [
        {**by_hand(50), "confidence": "medium"},
        {**by_hand(100), "confidence": "high"},
        {**by_hand(300), "confidence": "low"},
    ]
    # The same figures, written out.
    assert scenarios[0] == {
        "daily_budget": 50,
        "monthly_budget": 1520.0,
        "estimated_impressions": 584.96,
        "estimated_clicks": 29.25,
        "estimated_conversions": 2.92,
        "estimated_revenue": 146.24,
        "estimated_roas": 2.92,
        "confidence": "medium",
    }
    assert scenarios[2]["estimated_roas"] == 1.67
    assert contract(result["baseline_metrics"]) == {
        **by_hand(100),
        "cpc": 2,
        "ctr": 0.05,
        "conversion_rate": 0.1,
        "avg_order_value": 50,
    }
    assert result["platform"] == "google"
    # revenue - spend: 96.24, 150, 200 a day: the third scenario is best.
    assert result["recommendation"].startswith("Spend $300.00 per day (scenario 3 of 3, an increase)")
    assert "$200.00 per day" in result["recommendation"]


@pytest.mark.parametrize(
    ("b", "band"),
    [
        (80, "high"),
        (120, "high"),
        (100, "high"),
        (79.99, "medium"),
        (50, "medium"),
        (200, "medium"),
        (49.99, "low"),
        (200.01, "low"),
    ],
)
def test_confidence_bands(b, band):
    assert confidence(b, 100) == band


def test_every_figure_has_at_most_two_decimals():
    result = simulate(
        platform="meta",
        current_daily_budget=37.3,
        metrics=Metrics(cpc=0.73, ctr=0.0137, conversion_rate=0.031, avg_order_value=41.9),
        budget_scenarios=[11.11, 37.3, 99.99],
    )

    for scenario in [*result["scenarios"], result["baseline_metrics"]]:
        for key, value in scenario.items():
            if key.startswith(("estimated_", "monthly_", "daily_")):
                assert round(value, 2) == value, (key, value)


def test_when_every_scenario_loses_money_the_smallest_loss_is_named():
    result = simulate(
        platform="linkedin",
        current_daily_budget=100,
        metrics=Metrics(cpc=10, ctr=0.01, conversion_rate=0.01, avg_order_value=20),
        budget_scenarios=[500, 20, 100],
    )

    assert result["recommendation"].startswith("Spend $20.00 per day (scenario 2 of 3, a decrease)")
    assert "smallest projected loss" in result["recommendation"]


def test_ties_go_to_the_first_listed_scenario():
    free = Metrics(cpc=1, ctr=0.5, conversion_rate=0, avg_order_value=0)  # nothing earns: profit is -spend

    result = simulate(platform="x", current_daily_budget=10, metrics=free, budget_scenarios=[5, 5])

    assert "scenario 1 of 2" in result["recommendation"]


def test_extreme_inputs_that_overflow_are_refused():
    with pytest.raises(SimulationOverflow):
        simulate(
            platform="x",
            current_daily_budget=1e9,
            metrics=Metrics(cpc=1e-300, ctr=1e-300, conversion_rate=1, avg_order_value=1),
            budget_scenarios=[1],
        )
