from __future__ import annotations

from drf_spectacular.utils import extend_schema
from rest_framework.response import Response

from brands.api.serializers.ads import AdSimulationInput, AdSimulationSerializer, ScenarioSerializer
from brands.domain.simulator import (
    OTHER_PLATFORM,
    SimulationOverflow,
    default_ceiling,
    platform_profile,
    simulate,
    with_platform_defaults,
)
from core.api.validation import RequestValidationError, error
from core.api.views import ApiView, csv_export
from core.http.access import Access

RANGE_COLUMNS = ["width", "clicks_low", "clicks_high", "revenue_low", "revenue_high"]


class AdSimulateView(ApiView):
    access = Access.USER_OR_KEY

    @extend_schema(
        operation_id="ads_simulate",
        summary="Project clicks, conversions and revenue at several daily budgets",
        description=(
            "Diminishing returns: clicks(b) = (B / cpc) · ln(1 + b/B) / ln 2, where B is `current_daily_budget`. "
            "impressions = clicks / ctr, conversions = clicks · conversion_rate, revenue = conversions · "
            "avg_order_value, roas = revenue / b, monthly = b · 30.4. Projected figures are rounded to 2 decimals, "
            "each from unrounded figures (so 0.00 conversions beside a revenue means fewer than 0.005). "
            "Works with a JWT or an API key. With `Accept: text/csv`: the baseline, then one row per scenario.\n\n"
            "Optional additions, none of which changes a figure above unless asked for: a documented `platform` "
            "(google, meta, linkedin, tiktok, microsoft) supplies defaults for an omitted cpc, ctr or "
            "conversion_rate (`defaults_used` names them); `saturation: true` or `inventory_ceiling_clicks` C "
            "flattens the clicks: x below k = 0.8·C as above, then C - (C - k)·exp(-(x - k)/(C - k)) "
            "(`saturated` per scenario); `margin` (default 1) weighs revenue in `estimated_profit` and "
            "`optimal_daily_budget`, the budget on the curve with the highest margin · revenue - spend "
            "(B · (margin · conversion_rate · avg_order_value / (cpc · ln 2) - 1) without saturation, 0 when no "
            "budget is profitable); `confidence_range` is estimated_clicks · exp(∓w), w = 0.1 + 0.25 · |ln(b/B)|. "
            "See docs/decisions.md#ad-simulator-platforms."
        ),
        tags=["ads"],
        request=AdSimulationInput,
        responses=AdSimulationSerializer,
    )
    @csv_export("simulation")
    def post(self, request):
        data = self.body(AdSimulationInput)
        profile = platform_profile(data["platform"])
        metrics, defaults_used = with_platform_defaults(profile, dict(data["current_metrics"]))
        ceiling = self._ceiling(data, profile, metrics)
        try:
            result = simulate(
                platform=data["platform"],
                current_daily_budget=data["current_daily_budget"],
                metrics=metrics,
                budget_scenarios=data["budget_scenarios"],
                ceiling=ceiling,
                margin=data.get("margin", 1.0),
                platform_profile_name=profile.name if profile else OTHER_PLATFORM,
                defaults_used=defaults_used,
            )
        except SimulationOverflow as exc:
            message = str(exc)
            raise RequestValidationError(
                [error("value_error", ["body"], f"Value error, {message}", request.data, {"error": message})]
            ) from exc
        return Response(AdSimulationSerializer(result).data)

    def _ceiling(self, data, profile, metrics) -> float | None:
        """The inventory ceiling the request opts into, or None (docs/decisions.md#ad-simulator-platforms)."""
        saturation = data.get("saturation")
        explicit = data.get("inventory_ceiling_clicks")
        if explicit is not None:
            if saturation is False:
                raise _value_error(
                    "inventory_ceiling_clicks",
                    explicit,
                    "an inventory ceiling needs saturation, not `saturation: false`",
                )
            return explicit
        if not saturation:
            return None
        if profile is None:
            raise _value_error(
                "saturation",
                saturation,
                f"platform {data['platform']!r} has no default inventory ceiling: send inventory_ceiling_clicks",
            )
        return default_ceiling(profile, data["current_daily_budget"], metrics)

    def csv_table(self, data):
        ranged = [f"confidence_{name}" for name in RANGE_COLUMNS]
        columns = ["platform", "row", *(f for f in ScenarioSerializer().fields if f != "confidence_range"), *ranged]
        baseline = {"platform": data["platform"], "row": "baseline", **data["baseline_metrics"]}
        scenarios = [
            {
                "platform": data["platform"],
                "row": "scenario",
                **s,
                **{f"confidence_{name}": s["confidence_range"][name] for name in RANGE_COLUMNS},
            }
            for s in data["scenarios"]
        ]
        return columns, [baseline, *scenarios]


def _value_error(field: str, value, message: str) -> RequestValidationError:
    return RequestValidationError(
        [error("value_error", ["body", field], f"Value error, {message}", value, {"error": message})]
    )
