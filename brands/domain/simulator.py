"""The ad-spend simulator (docs/decisions.md#domain-rules, docs/decisions.md#ad-simulator-platforms): a pure
function, no I/O.

Diminishing returns on a logarithmic curve through today's budget B: at b = B it gives today's
clicks (B / cpc), and doubling the budget adds the same number of clicks again, not twice as many.

    clicks(b)   = (B / cpc) · ln(1 + b/B) / ln 2
    impressions = clicks / ctr
    conversions = clicks · conversion_rate
    revenue     = conversions · avg_order_value
    roas        = revenue / b
    monthly     = b · 30.4

Confidence falls with the distance from what was observed: r = b/B in 0.8..1.2 is `high`, in
0.5..2 `medium`, anything else `low`. Every projected figure is computed from unrounded figures and
rounded to 2 decimals once, at the end (the echoed inputs are not); the recommendation compares
unrounded profit (revenue - spend).

Additions a client opts into, each leaving the figures above untouched when it does not
(docs/decisions.md#ad-simulator-platforms): platform defaults for omitted metrics, an inventory
ceiling that flattens the clicks curve, a margin, the optimal budget on the curve and a confidence
range per scenario.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any

DAYS_PER_MONTH = 30.4
MAX_DAILY_BUDGET = 1_000_000_000  # USD per day; beyond this a projection means nothing
SATURATION_KNEE = 0.8  # the curve is the contract's up to 80 % of the ceiling, then bends towards it
_LN2 = math.log(2)


@dataclass(frozen=True)
class Metrics:
    cpc: float
    ctr: float
    conversion_rate: float
    avg_order_value: float


@dataclass(frozen=True)
class PlatformProfile:
    """Rough industry-wide figures for one platform, used only for a metric the client omits, and a daily
    click inventory as a multiple of today's clicks (B / cpc), used only when the client asks for saturation."""

    name: str
    cpc: float
    ctr: float
    conversion_rate: float
    ceiling_multiple: float


# docs/decisions.md#ad-simulator-platforms: typical cross-industry averages, a starting point, not measurements.
PLATFORMS: dict[str, PlatformProfile] = {
    p.name: p
    for p in (
        PlatformProfile("google", cpc=2.69, ctr=0.0317, conversion_rate=0.0375, ceiling_multiple=4),
        PlatformProfile("meta", cpc=1.72, ctr=0.009, conversion_rate=0.0921, ceiling_multiple=6),
        PlatformProfile("linkedin", cpc=5.26, ctr=0.0044, conversion_rate=0.06, ceiling_multiple=2.5),
        PlatformProfile("tiktok", cpc=1.0, ctr=0.0084, conversion_rate=0.015, ceiling_multiple=8),
        PlatformProfile("microsoft", cpc=1.54, ctr=0.0283, conversion_rate=0.0294, ceiling_multiple=3),
    )
}
PLATFORM_ALIASES = {"facebook": "meta", "instagram": "meta", "bing": "microsoft"}
OTHER_PLATFORM = "other"
DEFAULTED_METRICS = ("cpc", "ctr", "conversion_rate")


def platform_profile(platform: str) -> PlatformProfile | None:
    """The profile a platform name selects (case and surrounding spaces ignored), None for any other name."""
    key = platform.strip().casefold()
    return PLATFORMS.get(PLATFORM_ALIASES.get(key, key))


def with_platform_defaults(profile: PlatformProfile | None, given: dict[str, float]) -> tuple[Metrics, list[str]]:
    """The metrics to project with, and the names of those taken from the platform's defaults. A metric
    missing with no profile to default it is the caller's to refuse (the API reports it as missing)."""
    defaulted = [name for name in DEFAULTED_METRICS if name not in given]
    if defaulted and profile is None:
        raise ValueError(f"no platform defaults for {', '.join(defaulted)}")
    values = {name: getattr(profile, name) for name in defaulted}
    return Metrics(**{**given, **values}), defaulted


def default_ceiling(profile: PlatformProfile, current_budget: float, m: Metrics) -> float:
    """The platform's daily click inventory: its multiple of today's clicks."""
    return profile.ceiling_multiple * current_budget / m.cpc


class SimulationOverflow(ValueError):
    """The inputs are so extreme that a projected figure is not a finite number."""


def confidence(budget: float, current_budget: float) -> str:
    ratio = budget / current_budget
    if 0.8 <= ratio <= 1.2:
        return "high"
    if 0.5 <= ratio <= 2:
        return "medium"
    return "low"


def contract_clicks(budget: float, current_budget: float, cpc: float) -> float:
    return (current_budget / cpc) * math.log1p(budget / current_budget) / _LN2


def saturate(clicks: float, ceiling: float) -> tuple[float, bool]:
    """Below the knee k = 0.8·C the contract's clicks x unchanged; above it C - (C - k)·exp(-(x - k)/(C - k)):
    the same value and slope at the knee, rising towards C and never reaching it. Returns (clicks, bent)."""
    knee = SATURATION_KNEE * ceiling
    if not clicks > knee:  # not a number stays one, for the caller to refuse
        return clicks, False
    span = ceiling - knee
    if span <= 0:  # a ceiling so small (subnormal) that 0.8 · C rounds to C: the bend is a corner
        return ceiling, True
    return ceiling - span * math.exp(-(clicks - knee) / span), True


def band_width(budget: float, current_budget: float) -> float:
    """w = 0.1 + 0.25·|ln r|: ±10 % (in log terms) at today's budget, wider the further the scenario is."""
    return 0.1 + 0.25 * abs(math.log(budget) - math.log(current_budget))  # finite even when b / B is not


def _project(budget: float, current_budget: float, m: Metrics, ceiling: float | None, margin: float) -> dict:
    raw = contract_clicks(budget, current_budget, m.cpc)
    clicks, saturated = saturate(raw, ceiling) if ceiling is not None else (raw, False)
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
        "estimated_profit": margin * revenue - budget,
    }
    if not all(math.isfinite(v) for v in figures.values()):
        raise SimulationOverflow("The inputs are too extreme to project: a figure would not be a finite number.")
    return {**figures, "saturated": saturated}


def _confidence_range(p: dict, current_budget: float, m: Metrics, ceiling: float | None) -> dict[str, float | None]:
    """Clicks times exp(∓w), capped at the ceiling when there is one; revenue is those clicks times
    conversion_rate · avg_order_value. A bound too large to be a number is null."""
    w = band_width(p["daily_budget"], current_budget)
    low, high = p["estimated_clicks"] * math.exp(-w), p["estimated_clicks"] * math.exp(min(w, 700))
    if ceiling is not None:
        high = min(high, ceiling)
    value = m.conversion_rate * m.avg_order_value
    return {
        "width": w,
        "clicks_low": low,
        "clicks_high": high,
        "revenue_low": low * value,
        "revenue_high": high * value,
    }


def optimal_budget(current_budget: float, m: Metrics, *, margin: float = 1.0, ceiling: float | None = None) -> float:
    """The daily budget b ≥ 0 that maximises margin · revenue(b) - b, at most MAX_DAILY_BUDGET.

    On the contract's curve, d/db[(B/cpc)·ln(1 + b/B)/ln 2 · cr · aov · margin - b] = 0 gives
    b* = B · (margin · cr · aov / (cpc · ln 2) - 1), and 0 when that is not positive (no budget is
    profitable). With a ceiling the profit is still concave (a concave, increasing bend of a concave
    curve), so its slope falls as b grows and bisection on the slope's sign finds the optimum."""
    value = margin * m.conversion_rate * m.avg_order_value
    if value <= 0:
        return 0.0
    log_gain = math.log(value) - math.log(m.cpc) - math.log(_LN2)  # ln of the slope's factor at b = 0
    if log_gain <= 0:
        return 0.0
    unbent = current_budget * math.expm1(log_gain) if log_gain < 700 else math.inf
    best = min(unbent, MAX_DAILY_BUDGET)
    if ceiling is None:
        return best
    knee = SATURATION_KNEE * ceiling
    span = ceiling - knee

    def rising(b: float) -> bool:  # the slope of profit at b is positive (compared in logs, never overflows)
        x = contract_clicks(b, current_budget, m.cpc)
        bend = 0.0 if x <= knee else ((x - knee) / span if span > 0 else math.inf)
        return log_gain - math.log1p(b / current_budget) - bend > 0

    if not rising(best) and contract_clicks(best, current_budget, m.cpc) > knee:
        low, high = 0.0, best
        for _ in range(200):
            mid = (low + high) / 2
            if mid in (low, high):
                break
            low, high = (mid, high) if rising(mid) else (low, mid)
        return low
    return best


def _optimum(current_budget: float, m: Metrics, margin: float, ceiling: float | None) -> dict[str, Any]:
    budget = optimal_budget(current_budget, m, margin=margin, ceiling=ceiling)
    if budget <= 0:
        return {
            "optimal_daily_budget": 0.0,
            "optimal_daily_profit": 0.0,
            "optimal_note": "No budget is profitable: each extra dollar returns less than a dollar at any budget.",
        }
    raw = contract_clicks(budget, current_budget, m.cpc)
    clicks = saturate(raw, ceiling)[0] if ceiling is not None else raw
    profit = margin * clicks * m.conversion_rate * m.avg_order_value - budget
    capped = budget >= MAX_DAILY_BUDGET
    return {
        "optimal_daily_budget": round(budget, 2),
        "optimal_daily_profit": round(profit, 2) if math.isfinite(profit) else None,
        "optimal_note": (
            f"The best budget lies at or beyond ${MAX_DAILY_BUDGET:,.2f} per day, the top of the simulator's range."
            if capped
            else "The daily budget on the curve where margin · revenue - spend is highest."
        ),
    }


def _rounded(figures: dict[str, Any]) -> dict[str, Any]:
    return {key: _round(value) for key, value in figures.items()}


def _round(value: Any) -> Any:
    """2 decimals (Python's round: the nearest, ties to even); a flag stays a flag; not a finite number: None."""
    if isinstance(value, bool) or not isinstance(value, int | float):
        return value
    return round(value, 2) if math.isfinite(value) else None


def simulate(
    *,
    platform: str,
    current_daily_budget: float,
    metrics: Metrics,
    budget_scenarios: list[float],
    ceiling: float | None = None,
    margin: float = 1.0,
    platform_profile_name: str = OTHER_PLATFORM,
    defaults_used: list[str] | None = None,
) -> dict[str, Any]:
    """Project each scenario. B and every scenario must be > 0, cpc > 0, ctr in (0, 1], margin in (0, 1],
    ceiling > 0 or None (checked by the caller)."""
    B = current_daily_budget
    baseline = _project(B, B, metrics, ceiling, margin)
    projected = [_project(b, B, metrics, ceiling, margin) for b in budget_scenarios]

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
            {
                **_rounded(p),
                "confidence": confidence(p["daily_budget"], B),
                "confidence_range": _rounded(_confidence_range(p, B, metrics, ceiling)),
            }
            for p in projected
        ],
        "recommendation": _recommendation(projected[best], profits[best], best, len(projected), B),
        "platform_profile": platform_profile_name,
        "defaults_used": list(defaults_used or []),
        "inventory_ceiling_clicks": round(ceiling, 2) if ceiling is not None else None,
        "margin": margin,
        **_optimum(B, metrics, margin, ceiling),
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
