from __future__ import annotations

from collections.abc import Mapping

from rest_framework import serializers

from brands.domain.simulator import (
    DEFAULTED_METRICS,
    MAX_DAILY_BUDGET,
    OTHER_PLATFORM,
    PLATFORM_ALIASES,
    PLATFORMS,
    platform_profile,
)
from core.api.validation import GreaterThan

MAX_BUDGET = MAX_DAILY_BUDGET  # USD per day; beyond this a projection means nothing
MAX_CEILING_CLICKS = 1_000_000_000_000  # clicks per day; more than any platform serves
_KNOWN = ", ".join(f"`{name}`" for name in PLATFORMS)

# A documented platform or alias, in any case, as the server reads it (CharField trims the spaces around it).
PLATFORM_PATTERN = (
    r"^\s*(?:"
    + "|".join("".join(f"[{c.lower()}{c.upper()}]" for c in name) for name in [*PLATFORMS, *PLATFORM_ALIASES])
    + r")\s*$"
)
_DOCUMENTED = {"properties": {"platform": {"pattern": PLATFORM_PATTERN}}}
_DEFAULTED = " Optional when `platform` is a documented platform (its default is used); required otherwise."


def _above_zero(*names: str) -> dict:
    """The schema's side of `GreaterThan(0)`, which drf-spectacular does not map: `exclusiveMinimum: 0`."""
    return {"properties": {name: {"exclusiveMinimum": 0} for name in names}}


class CurrentMetricsInput(serializers.Serializer):
    openapi_extra = _above_zero("cpc", "ctr")  # merged into the schema by core.api.schema.AutoSchema

    cpc = serializers.FloatField(
        validators=[GreaterThan(0)], required=False, help_text="Cost per click, USD; > 0." + _DEFAULTED
    )
    ctr = serializers.FloatField(
        validators=[GreaterThan(0)],
        max_value=1,
        required=False,
        help_text="Click-through rate, 0 < ctr ≤ 1." + _DEFAULTED,
    )
    conversion_rate = serializers.FloatField(
        min_value=0, max_value=1, required=False, help_text="Conversions per click, 0..1." + _DEFAULTED
    )
    avg_order_value = serializers.FloatField(min_value=0, help_text="Revenue per conversion, USD; ≥ 0.")


class AdSimulationInput(serializers.Serializer):
    platform = serializers.CharField(
        max_length=50,
        help_text=(
            f"Ad platform, for example google, meta, linkedin. Documented platforms: {_KNOWN} (case and "
            f"surrounding spaces ignored; also {', '.join(f'`{a}`' for a in PLATFORM_ALIASES)}), which supply "
            "defaults for omitted metrics and an inventory ceiling. Any other name is accepted and echoed, as "
            f"`platform_profile: {OTHER_PLATFORM}`, with no defaults."
        ),
    )
    current_daily_budget = serializers.FloatField(
        validators=[GreaterThan(0)], max_value=MAX_BUDGET, help_text="Today's daily budget B, USD; > 0."
    )
    current_metrics = CurrentMetricsInput()
    budget_scenarios = serializers.ListField(
        child=serializers.FloatField(validators=[GreaterThan(0)], max_value=MAX_BUDGET),
        min_length=1,
        max_length=20,
        help_text="Daily budgets to simulate, USD, each > 0; 1 to 20 of them.",
    )
    saturation = serializers.BooleanField(
        required=False,
        help_text=(
            "Opt in to an inventory ceiling: clicks follow the contract's curve up to 80 % of the ceiling, then "
            "flatten towards it. Without `inventory_ceiling_clicks` the platform's default ceiling is used (a "
            "multiple of today's clicks B / cpc), so it needs a documented `platform`. Default false."
        ),
    )
    inventory_ceiling_clicks = serializers.FloatField(
        required=False,
        validators=[GreaterThan(0)],
        max_value=MAX_CEILING_CLICKS,
        help_text="Daily click inventory C (> 0); sending it opts in to saturation (not with `saturation: false`).",
    )
    margin = serializers.FloatField(
        required=False,
        validators=[GreaterThan(0)],
        max_value=1,
        help_text=(
            "Share of revenue kept as profit, 0 < margin ≤ 1 (default 1). Used by `estimated_profit` and "
            "`optimal_daily_budget`; `recommendation` keeps comparing revenue - spend."
        ),
    )

    # Merged into the schema by core.api.schema.AutoSchema, the rules across fields the server checks
    # (docs/decisions.md#ad-simulator-platforms): the metrics a documented platform defaults are required for any
    # other; `saturation: true` without a ceiling needs a documented platform; a ceiling is not `saturation: false`.
    openapi_extra = {
        "properties": {
            **_above_zero("current_daily_budget", "inventory_ceiling_clicks", "margin")["properties"],
            "budget_scenarios": {"items": {"exclusiveMinimum": 0}},
        },
        "allOf": [
            {
                "anyOf": [
                    _DOCUMENTED,
                    {"properties": {"current_metrics": {"required": list(DEFAULTED_METRICS)}}},
                ]
            },
            {
                "anyOf": [
                    _DOCUMENTED,
                    {"required": ["inventory_ceiling_clicks"]},
                    {"not": {"required": ["saturation"], "properties": {"saturation": {"const": True}}}},
                ]
            },
            {
                "not": {
                    "required": ["saturation", "inventory_ceiling_clicks"],
                    "properties": {"saturation": {"const": False}},
                }
            },
        ],
    }

    def get_fields(self):
        """A metric the platform defaults is optional; for any other platform all four are required, as ever.
        (Without data, as when the schema is built, they show as optional: `openapi_extra` says when not.)"""
        fields = super().get_fields()
        data = getattr(self, "initial_data", None)
        if not isinstance(data, Mapping):
            return fields
        platform = data.get("platform")
        if not (isinstance(platform, str) and platform_profile(platform)):
            for name in DEFAULTED_METRICS:
                fields["current_metrics"].fields[name].required = True
        return fields


class ConfidenceRangeSerializer(serializers.Serializer):
    width = serializers.FloatField(help_text="w = 0.1 + 0.25 · |ln(daily_budget / current_daily_budget)|")
    clicks_low = serializers.FloatField(help_text="estimated_clicks · exp(-w)")
    clicks_high = serializers.FloatField(
        allow_null=True, help_text="estimated_clicks · exp(w), at most the ceiling; null if not a finite number"
    )
    revenue_low = serializers.FloatField(help_text="clicks_low · conversion_rate · avg_order_value")
    revenue_high = serializers.FloatField(
        allow_null=True, help_text="clicks_high · conversion_rate · avg_order_value; null if not a finite number"
    )


class ScenarioSerializer(serializers.Serializer):
    daily_budget = serializers.FloatField()
    monthly_budget = serializers.FloatField(help_text="daily_budget * 30.4")
    estimated_impressions = serializers.FloatField()
    estimated_clicks = serializers.FloatField()
    estimated_conversions = serializers.FloatField(
        help_text="Rounded on its own: 0.00 beside a revenue means fewer than 0.005 conversions."
    )
    estimated_revenue = serializers.FloatField(help_text="From the unrounded conversions.")
    estimated_roas = serializers.FloatField(help_text="estimated_revenue / daily_budget")
    confidence = serializers.ChoiceField(
        choices=["high", "medium", "low"],
        help_text="By r = daily_budget / current_daily_budget: high for 0.8..1.2, medium for 0.5..2, else low.",
    )
    estimated_profit = serializers.FloatField(help_text="margin · estimated_revenue - daily_budget")
    saturated = serializers.BooleanField(help_text="True when the inventory ceiling bent the clicks.")
    confidence_range = ConfidenceRangeSerializer(help_text="A band around the projection, wider further from B.")


class BaselineMetricsSerializer(serializers.Serializer):
    daily_budget = serializers.FloatField()
    monthly_budget = serializers.FloatField()
    estimated_impressions = serializers.FloatField()
    estimated_clicks = serializers.FloatField()
    estimated_conversions = serializers.FloatField()
    estimated_revenue = serializers.FloatField()
    estimated_roas = serializers.FloatField()
    cpc = serializers.FloatField()
    ctr = serializers.FloatField()
    conversion_rate = serializers.FloatField()
    avg_order_value = serializers.FloatField()
    estimated_profit = serializers.FloatField(help_text="margin · estimated_revenue - daily_budget")
    saturated = serializers.BooleanField()


class AdSimulationSerializer(serializers.Serializer):
    platform = serializers.CharField(help_text="As sent.")
    baseline_metrics = BaselineMetricsSerializer(help_text="The same figures at today's budget, plus the inputs.")
    scenarios = ScenarioSerializer(many=True, help_text="In the order the budgets were given.")
    recommendation = serializers.CharField(help_text="Names the scenario with the best revenue minus spend.")
    platform_profile = serializers.ChoiceField(
        choices=[*PLATFORMS, OTHER_PLATFORM], help_text="The documented platform `platform` selects, or `other`."
    )
    defaults_used = serializers.ListField(
        child=serializers.ChoiceField(choices=list(DEFAULTED_METRICS)),
        help_text="The metrics taken from the platform's defaults (omitted from `current_metrics`).",
    )
    inventory_ceiling_clicks = serializers.FloatField(
        allow_null=True, help_text="The ceiling the clicks flatten towards; null without saturation."
    )
    margin = serializers.FloatField(help_text="As sent, or 1.")
    optimal_daily_budget = serializers.FloatField(
        help_text=(
            "The budget on the curve with the highest margin · revenue - spend, at most 1,000,000,000; 0 when no "
            "budget is profitable. Without saturation: B · (margin · conversion_rate · avg_order_value / "
            "(cpc · ln 2) - 1)."
        )
    )
    optimal_daily_profit = serializers.FloatField(
        allow_null=True, help_text="margin · revenue - spend at that budget; null if not a finite number."
    )
    optimal_note = serializers.CharField()
