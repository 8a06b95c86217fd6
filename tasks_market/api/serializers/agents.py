"""Agents and their benchmark runs."""

from __future__ import annotations

from rest_framework import serializers

from tasks_market.api.serializers.common import (
    BlankAsNullField,
    safe_endpoint,
)
from tasks_market.models import (
    Agent,
    BenchmarkRun,
)

# --- Agents ----------------------------------------------------------------------------------------


class AgentEndpointInput(serializers.Serializer):
    endpoint_url = serializers.URLField(
        max_length=2000,
        help_text="Where won tasks are POSTed (signed, Standard Webhooks). https, on a public address.",
    )

    def validate_endpoint_url(self, value: str) -> str:
        return safe_endpoint(value)


class AgentCreateInput(AgentEndpointInput):
    name = serializers.CharField(max_length=120)
    description = serializers.CharField(max_length=2000, allow_blank=True, default="")
    capabilities = serializers.ListField(
        child=serializers.CharField(max_length=50), max_length=20, default=list, help_text="Free-form tags."
    )


class AgentSerializer(serializers.ModelSerializer):
    capabilities = serializers.ListField(child=serializers.CharField())
    benchmark_score = serializers.FloatField(allow_null=True, help_text="0..100, from the last completed benchmark.")

    class Meta:
        model = Agent
        fields = [
            "id",
            "name",
            "description",
            "endpoint_url",
            "capabilities",
            "benchmark_score",
            "benchmarked_at",
            "secret_rotated_at",
            "previous_secret_expires_at",
            "created_at",
            "updated_at",
        ]


class AgentWithSecretSerializer(AgentSerializer):
    signing_secret = serializers.CharField(
        help_text="`whsec_...`: verifies the signature of every dispatch. Shown only in this response."
    )

    class Meta(AgentSerializer.Meta):
        fields = [*AgentSerializer.Meta.fields, "signing_secret"]


class BenchmarkCaseResultSerializer(serializers.Serializer):
    case = serializers.CharField()
    passed = serializers.BooleanField()
    status_code = serializers.IntegerField(allow_null=True)
    latency_ms = serializers.IntegerField(allow_null=True)
    error = serializers.CharField(allow_blank=True)


class BenchmarkRunSerializer(serializers.ModelSerializer):
    agent_id = serializers.UUIDField()
    score = serializers.FloatField(allow_null=True)
    results = BenchmarkCaseResultSerializer(many=True)
    error = BlankAsNullField()

    class Meta:
        model = BenchmarkRun
        fields = [
            "id",
            "agent_id",
            "status",
            "score",
            "cases_total",
            "cases_passed",
            "avg_latency_ms",
            "results",
            "error",
            "created_at",
            "started_at",
            "finished_at",
        ]
