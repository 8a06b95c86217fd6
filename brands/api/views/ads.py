from __future__ import annotations

from drf_spectacular.utils import extend_schema
from rest_framework.response import Response

from brands.api.serializers.ads import AdSimulationInput, AdSimulationSerializer, ScenarioSerializer
from brands.domain.simulator import Metrics, SimulationOverflow, simulate
from core.api.validation import RequestValidationError, error
from core.api.views import ApiView, csv_export
from core.http.access import Access


class AdSimulateView(ApiView):
    access = Access.USER_OR_KEY

    @extend_schema(
        operation_id="ads_simulate",
        summary="Project clicks, conversions and revenue at several daily budgets",
        description=(
            "Diminishing returns: clicks(b) = (B / cpc) · ln(1 + b/B) / ln 2, where B is `current_daily_budget`. "
            "impressions = clicks / ctr, conversions = clicks · conversion_rate, revenue = conversions · "
            "avg_order_value, roas = revenue / b, monthly = b · 30.4. Projected figures are rounded to 2 decimals. "
            "Works with a JWT or an API key. With `Accept: text/csv`: the baseline, then one row per scenario."
        ),
        tags=["ads"],
        request=AdSimulationInput,
        responses=AdSimulationSerializer,
    )
    @csv_export("simulation")
    def post(self, request):
        data = self.body(AdSimulationInput)
        try:
            result = simulate(
                platform=data["platform"],
                current_daily_budget=data["current_daily_budget"],
                metrics=Metrics(**data["current_metrics"]),
                budget_scenarios=data["budget_scenarios"],
            )
        except SimulationOverflow as exc:
            message = str(exc)
            raise RequestValidationError(
                [error("value_error", ["body"], f"Value error, {message}", request.data, {"error": message})]
            ) from exc
        return Response(AdSimulationSerializer(result).data)

    def csv_table(self, data):
        columns = ["platform", "row", *ScenarioSerializer().fields]
        baseline = {"platform": data["platform"], "row": "baseline", **data["baseline_metrics"]}
        scenarios = [{"platform": data["platform"], "row": "scenario", **s} for s in data["scenarios"]]
        return columns, [baseline, *scenarios]
