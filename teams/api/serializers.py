from __future__ import annotations

from rest_framework import serializers

from core.api.fields import BlankAsNullField, checkout_return_url
from teams.models import OnboardingStep, OperationMode, Team, TeamStatus, TeamType, Tier, TriggerMode, WorkflowPhase


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


class _TeamSettingsInput(serializers.Serializer):
    operation_mode = serializers.ChoiceField(choices=OperationMode.choices, required=False)
    workflow_phase = serializers.ChoiceField(choices=WorkflowPhase.choices, required=False)
    trigger_mode = serializers.ChoiceField(choices=TriggerMode.choices, required=False)
    default_currency = serializers.RegexField(r"^[a-z]{3}$", required=False, help_text="ISO 4217, lower case.")
    auto_config = serializers.DictField(required=False)
    orchestrator_cadence = serializers.DictField(required=False)
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
