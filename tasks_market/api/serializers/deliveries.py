"""Deliveries and their submissions."""

from __future__ import annotations

from drf_spectacular.utils import extend_schema_field
from rest_framework import serializers

from tasks_market.api.serializers.common import (
    ArtefactInput,
    ArtefactSerializer,
    BlankAsNullField,
    FeePartField,
    money_field,
)
from tasks_market.models import (
    Delivery,
    DeliverySubmission,
    DisputeOutcome,
    DisputeResolution,
    TaskStatus,
)
from tasks_market.models.deliveries import MAX_REVISIONS

# --- Deliveries ------------------------------------------------------------------------------------


class DeliverySubmitInput(serializers.Serializer):
    artefacts = serializers.ListField(child=ArtefactInput(), min_length=1, max_length=20)
    notes = serializers.CharField(max_length=10_000, allow_blank=True, default="")


class DisputeInput(serializers.Serializer):
    reason = serializers.CharField(max_length=5000)


class DisputeResolveInput(serializers.Serializer):
    outcome = serializers.ChoiceField(
        choices=DisputeOutcome.choices,
        help_text="`refund_full`: the poster gets everything back; `release_full`: the seller is paid (less the "
        "fee); `split`: `refund_amount` goes back to the poster, the rest to the seller.",
    )
    refund_amount = money_field(required=False, help_text="For `split`: more than 0, less than the payment.")
    note = serializers.CharField(max_length=5000, help_text="Why: kept with the resolution and sent to both sides.")


class DisputeResolutionSerializer(serializers.ModelSerializer):
    task_id = serializers.UUIDField()
    refund_amount = serializers.DecimalField(max_digits=12, decimal_places=2)
    release_amount = serializers.DecimalField(max_digits=12, decimal_places=2)
    fee = FeePartField("fee", amount="release_amount", help_text="The platform's fee of the released part.")
    net = FeePartField("net", amount="release_amount", help_text="The seller's net of the released part.")
    task_status = serializers.CharField(source="task.status")

    class Meta:
        model = DisputeResolution
        fields = [
            "id",
            "task_id",
            "task_status",
            "outcome",
            "refund_amount",
            "release_amount",
            "fee",
            "net",
            "currency",
            "reason",
            "note",
            "status",
            "created_at",
            "applied_at",
        ]


class RevisionInput(serializers.Serializer):
    feedback = serializers.CharField(max_length=5000)


class SubmissionSerializer(serializers.ModelSerializer):
    notes = BlankAsNullField()
    feedback = BlankAsNullField(help_text="The poster's revision request on this submission.")
    artefacts = ArtefactSerializer(many=True)

    class Meta:
        model = DeliverySubmission
        fields = ["number", "notes", "feedback", "artefacts", "created_at"]


class DeliverySerializer(serializers.ModelSerializer):
    task_id = serializers.UUIDField()
    task_status = serializers.ChoiceField(source="task.status", choices=TaskStatus.choices)
    bid_id = serializers.UUIDField()
    agent_id = serializers.UUIDField()
    revisions_left = serializers.SerializerMethodField()
    feedback = BlankAsNullField(help_text="The last revision request.")
    dispute_reason = BlankAsNullField()
    last_error = BlankAsNullField(help_text="Why the last dispatch attempt failed.")
    submissions = SubmissionSerializer(many=True)

    class Meta:
        model = Delivery
        fields = [
            "id",
            "task_id",
            "task_status",
            "bid_id",
            "agent_id",
            "status",
            "revision_count",
            "revisions_left",
            "feedback",
            "dispute_reason",
            "attempt_count",
            "last_error",
            "next_attempt_at",
            "dispatched_at",
            "submitted_at",
            "reviewed_at",
            "failed_at",
            "created_at",
            "updated_at",
            "submissions",
        ]

    @extend_schema_field(serializers.IntegerField())
    def get_revisions_left(self, delivery: Delivery) -> int:
        return max(0, MAX_REVISIONS - delivery.revision_count)
