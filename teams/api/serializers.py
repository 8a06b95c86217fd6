from __future__ import annotations

from rest_framework import serializers

from core.api.fields import BlankAsNullField, checkout_return_url
from teams.models import (
    MAX_RESEARCH_EVERY_HOURS,
    OnboardingStep,
    OperationMode,
    Team,
    TeamStatus,
    TeamType,
    Tier,
    TriggerMode,
    WorkflowPhase,
)


class TeamSerializer(serializers.ModelSerializer):
    workflow_phase_label = serializers.CharField(read_only=True)
    connected_accounts = serializers.ListField(child=serializers.JSONField())
    checkout_url = BlankAsNullField(
        help_text="Where the owner pays the subscription (the provider's hosted checkout), or null."
    )

    class Meta:
        model = Team
        fields = [
            "id",
            "team_type",
            "display_name",
            "status",
            "tier",
            "operation_mode",
            "created_at",
            "updated_at",
            "workflow_phase",
            "workflow_phase_label",
            "trigger_mode",
            "default_currency",
            "auto_config",
            "orchestrator_cadence",
            "content_strategy",
            "config",
            "payments_subscription_id",
            "checkout_url",
            "onboarding_step",
            "connected_accounts",
            "brand_kit_id",
            "brand_id",
            "brand_name",
            "hired_at",
            "paused_at",
            "cancelled_at",
            "subscription_ends_at",
        ]


class OrchestratorCadenceInput(serializers.Serializer):
    """The team's recurring work (docs/decisions.md#team-cadence). `{}` (the default): no recurring research."""

    research_every_hours = serializers.IntegerField(
        min_value=1,
        max_value=MAX_RESEARCH_EVERY_HOURS,
        required=False,
        help_text="Run the brand's audits (competitor discovery included) again this many hours after they last "
        "started, while the team is active and linked to a brand kit. 1 to 720 (30 days).",
    )

    def to_internal_value(self, data):
        attrs = super().to_internal_value(data)  # refuses what is not an object
        unknown = sorted(set(data) - set(self.fields))
        if unknown:
            raise serializers.ValidationError({name: ["Not a cadence setting."] for name in unknown})
        return dict(attrs)


class _TeamSettingsInput(serializers.Serializer):
    operation_mode = serializers.ChoiceField(choices=OperationMode.choices, required=False)
    workflow_phase = serializers.ChoiceField(choices=WorkflowPhase.choices, required=False)
    trigger_mode = serializers.ChoiceField(choices=TriggerMode.choices, required=False)
    default_currency = serializers.RegexField(r"^[a-z]{3}$", required=False, help_text="ISO 4217, lower case.")
    auto_config = serializers.DictField(required=False)
    orchestrator_cadence = OrchestratorCadenceInput(required=False)
    content_strategy = serializers.DictField(required=False)
    config = serializers.DictField(required=False)
    onboarding_step = serializers.ChoiceField(choices=OnboardingStep.choices, required=False)
    connected_accounts = serializers.ListField(child=serializers.DictField(), max_length=50, required=False)


class TeamHireInput(_TeamSettingsInput):
    team_type = serializers.ChoiceField(choices=TeamType.choices)
    display_name = serializers.CharField(max_length=120)
    tier = serializers.ChoiceField(choices=Tier.choices, default=Tier.STARTER)
    success_url = checkout_return_url(help_text="Where the checkout page links after paying (optional).")
    cancel_url = checkout_return_url(help_text="Where the checkout page links after declining (optional).")


class TeamUpdateInput(_TeamSettingsInput):
    display_name = serializers.CharField(max_length=120, required=False)
    status = serializers.ChoiceField(
        choices=[TeamStatus.ACTIVE, TeamStatus.PAUSED],
        required=False,
        help_text="`paused` pauses an active team; `active` resumes a paused one.",
    )


class TeamListQuery(serializers.Serializer):
    status = serializers.ChoiceField(choices=TeamStatus.choices, required=False)
    limit = serializers.IntegerField(min_value=1, max_value=100, default=20)
    offset = serializers.IntegerField(min_value=0, max_value=1_000_000, default=0)
