from __future__ import annotations

from rest_framework import serializers

from core.api.validation import GreaterThan

MAX_BUDGET = 1_000_000_000  # USD per day; beyond this a projection means nothing


class CurrentMetricsInput(serializers.Serializer):
    cpc = serializers.FloatField(validators=[GreaterThan(0)], help_text="Cost per click, USD; > 0.")
    ctr = serializers.FloatField(validators=[GreaterThan(0)], max_value=1, help_text="Click-through rate, 0 < ctr ≤ 1.")
    conversion_rate = serializers.FloatField(min_value=0, max_value=1, help_text="Conversions per click, 0..1.")
    avg_order_value = serializers.FloatField(min_value=0, help_text="Revenue per conversion, USD; ≥ 0.")


class AdSimulationInput(serializers.Serializer):
    platform = serializers.CharField(max_length=50, help_text="Ad platform, for example google, meta, linkedin.")
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


class ScenarioSerializer(serializers.Serializer):
    daily_budget = serializers.FloatField()
    monthly_budget = serializers.FloatField(help_text="daily_budget * 30.4")
    estimated_impressions = serializers.FloatField()
    estimated_clicks = serializers.FloatField()
    estimated_conversions = serializers.FloatField()
    estimated_revenue = serializers.FloatField()
    estimated_roas = serializers.FloatField(help_text="estimated_revenue / daily_budget")
    confidence = serializers.ChoiceField(
        choices=["high", "medium", "low"],
        help_text="By r = daily_budget / current_daily_budget: high for 0.8..1.2, medium for 0.5..2, else low.",
    )


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


class AdSimulationSerializer(serializers.Serializer):
    platform = serializers.CharField()
    baseline_metrics = BaselineMetricsSerializer(help_text="The same figures at today's budget, plus the inputs.")
    scenarios = ScenarioSerializer(many=True, help_text="In the order the budgets were given.")
    recommendation = serializers.CharField(help_text="Names the scenario with the best revenue minus spend.")
