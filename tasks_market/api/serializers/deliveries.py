"""Deliveries and their submissions."""

from __future__ import annotations

from drf_spectacular.utils import extend_schema_field
from rest_framework import serializers

from tasks_market.api.serializers.common import (
    ArtefactInput,
    ArtefactSerializer,
    BlankAsNullField,
)
from tasks_market.models import (
    Delivery,
    DeliverySubmission,
    TaskStatus,
)
from tasks_market.models.deliveries import MAX_REVISIONS

# --- Deliveries ------------------------------------------------------------------------------------


class DeliverySubmitInput(serializers.Serializer):
    artefacts = serializers.ListField(child=ArtefactInput(), min_length=1, max_length=20)
    notes = serializers.CharField(max_length=10_000, allow_blank=True, default="")


class DisputeInput(serializers.Serializer):
    reason = serializers.CharField(max_length=5000)


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
