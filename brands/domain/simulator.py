"""The ad-spend simulator (docs/decisions.md#domain-rules): a pure function, no I/O.

Diminishing returns on a logarithmic curve through today's budget B: at b = B it gives today's
clicks (B / cpc), and doubling the budget adds the same number of clicks again, not twice as many.

    clicks(b)   = (B / cpc) · ln(1 + b/B) / ln 2
    impressions = clicks / ctr
    conversions = clicks · conversion_rate
    revenue     = conversions · avg_order_value
    roas        = revenue / b
    monthly     = b · 30.4

Confidence falls with the distance from what was observed: r = b/B in 0.8..1.2 is `high`, in
0.5..2 `medium`, anything else `low`. Every projected figure is rounded to 2 decimals at the end
(the echoed inputs are not); the recommendation compares unrounded profit (revenue - spend).
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any

DAYS_PER_MONTH = 30.4


@dataclass(frozen=True)
class Metrics:
    cpc: float
    ctr: float
    conversion_rate: float
    avg_order_value: float


class SimulationOverflow(ValueError):
    """The inputs are so extreme that a projected figure is not a finite number."""


def confidence(budget: float, current_budget: float) -> str:
    ratio = budget / current_budget
    if 0.8 <= ratio <= 1.2:
        return "high"
    if 0.5 <= ratio <= 2:
        return "medium"
    return "low"


def _project(budget: float, current_budget: float, m: Metrics) -> dict[str, float]:
    clicks = (current_budget / m.cpc) * math.log1p(budget / current_budget) / math.log(2)
    conversions = clicks * m.conversion_rate
    revenue = conversions * m.avg_order_value
    figures = {
        "daily_budget": budget,
        "monthly_budget": budget * DAYS_PER_MONTH,
        "estimated_impressions": clicks / m.ctr,
        "estimated_clicks": clicks,
        "estimated_conversions": conversions,
        "estimated_revenue": revenue,
        "estimated_roas": revenue / budget,
    }
    if not all(math.isfinite(v) for v in figures.values()):
        raise SimulationOverflow("The inputs are too extreme to project: a figure would not be a finite number.")
    return figures


def _rounded(figures: dict[str, float]) -> dict[str, float]:
    return {key: round(value, 2) for key, value in figures.items()}


def simulate(
    *, platform: str, current_daily_budget: float, metrics: Metrics, budget_scenarios: list[float]
) -> dict[str, Any]:
    """Project each scenario. B and every scenario must be > 0, cpc > 0, ctr in (0, 1] (checked by the caller)."""
    baseline = _project(current_daily_budget, current_daily_budget, metrics)
    projected = [_project(b, current_daily_budget, metrics) for b in budget_scenarios]

    profits = [p["estimated_revenue"] - p["daily_budget"] for p in projected]
    best = max(range(len(projected)), key=lambda i: (profits[i], -i))  # ties: the first listed
    return {
        "platform": platform,
        # The inputs are echoed as sent: rounding a CTR of 0.004 to 0.0 would misreport it.
        "baseline_metrics": {
            **_rounded(baseline),
            "cpc": metrics.cpc,
            "ctr": metrics.ctr,
            "conversion_rate": metrics.conversion_rate,
            "avg_order_value": metrics.avg_order_value,
        },
        "scenarios": [
            {**_rounded(p), "confidence": confidence(p["daily_budget"], current_daily_budget)} for p in projected
        ],
        "recommendation": _recommendation(projected[best], profits[best], best, len(projected), current_daily_budget),
    }


def _recommendation(scenario: dict[str, float], profit: float, index: int, count: int, current: float) -> str:
    budget = scenario["daily_budget"]
    change = "your current budget" if budget == current else ("an increase" if budget > current else "a decrease")
    outcome = (
        f"a projected profit (revenue minus spend) of ${profit:,.2f} per day"
        if profit >= 0
        else f"the smallest projected loss, ${-profit:,.2f} per day (revenue does not cover spend)"
    )
    which = "the only scenario" if count == 1 else f"scenario {index + 1} of {count}"
    return (
        f"Spend ${budget:,.2f} per day ({which}, {change}): {outcome}, "
        f"with ROAS {scenario['estimated_roas']:.2f} and {confidence(budget, current)} confidence."
    )
