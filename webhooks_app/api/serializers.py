from __future__ import annotations

import json

from drf_spectacular.types import OpenApiTypes
from drf_spectacular.utils import extend_schema_field
from rest_framework import serializers

from core.http.outbound import UnsafeURL, check_url
from webhooks_app.event_types import EVENT_TYPES
from webhooks_app.models import WebhookAttempt, WebhookDelivery, WebhookSubscription

# --- Inbound ------------------------------------------------------------------------------------


class ProviderEventDataSerializer(serializers.Serializer):
    extra_allowed = True
    object = serializers.DictField(help_text="The provider object the event is about (payment intent, ...).")


class ProviderEventSerializer(serializers.Serializer):
    """What the payment provider posts (documentation; the raw body is what gets verified)."""

    extra_allowed = True  # the provider defines the body: unknown fields are accepted (docs/decisions.md#errors)

    id = serializers.CharField(max_length=255, help_text="The provider's event id, e.g. `evt_...`.")
    type = serializers.CharField(max_length=100, help_text="e.g. `payment_intent.succeeded`.")
    created = serializers.IntegerField(help_text="Unix seconds when the provider created the event.")
    data = ProviderEventDataSerializer()


class InboundResultSerializer(serializers.Serializer):
    status = serializers.ChoiceField(
        choices=["processed", "duplicate", "ignored", "rejected"],
        help_text=(
            "`processed`: applied now. `duplicate`: this event id was already applied (or refused). `ignored`: "
            "nothing handles this type, or the event is older than one already applied to the same object. "
            "`rejected`: authentic but refused, e.g. a payment_intent.succeeded whose amount or currency does "
            "not match the payment; recorded, not applied, not retried."
        ),
    )
    event_id = serializers.CharField()


# --- Outbound -----------------------------------------------------------------------------------


class SubscriptionInput(serializers.Serializer):
    url = serializers.URLField(
        max_length=2000, help_text="https only; it must not resolve to a private, loopback or link-local address."
    )
    events = serializers.ListField(child=serializers.ChoiceField(choices=EVENT_TYPES), min_length=1, max_length=50)
    description = serializers.CharField(max_length=500, required=False, allow_blank=True, default="")

    def validate_url(self, value: str) -> str:
        try:
            return check_url(value, schemes=("https",))
        except UnsafeURL as exc:
            raise serializers.ValidationError(str(exc), code="unsafe_url") from exc


class WebhookSubscriptionSerializer(serializers.ModelSerializer):
    events = serializers.ListField(child=serializers.ChoiceField(choices=EVENT_TYPES))
    previous_secret_expires_at = serializers.DateTimeField(
        allow_null=True, help_text="Until then the previous secret signs beside the current one (after a rotation)."
    )

    class Meta:
        model = WebhookSubscription
        fields = [
            "id",
            "url",
            "events",
            "description",
            "is_active",
            "disabled_reason",
            "disabled_at",
            "previous_secret_expires_at",
            "created_at",
        ]


class IssuedSubscriptionSerializer(WebhookSubscriptionSerializer):
    secret = serializers.CharField(help_text="The signing secret (`whsec_...`). Shown only in this response.")

    class Meta(WebhookSubscriptionSerializer.Meta):
        fields = [*WebhookSubscriptionSerializer.Meta.fields, "secret"]


class WebhookAttemptSerializer(serializers.ModelSerializer):
    class Meta:
        model = WebhookAttempt
        fields = [
            "number",
            "status",
            "status_code",
            "duration_ms",
            "error",
            "response_excerpt",
            "started_at",
            "finished_at",
        ]


class WebhookDeliverySerializer(serializers.ModelSerializer):
    event_id = serializers.UUIDField(source="event.id")
    event_type = serializers.ChoiceField(choices=EVENT_TYPES, source="event.type")
    message_id = serializers.CharField(help_text="The `webhook-id` header, the same on every attempt.")
    payload = serializers.SerializerMethodField(help_text="The body sent: `{type, timestamp, data}`.")
    attempts = WebhookAttemptSerializer(many=True)

    class Meta:
        model = WebhookDelivery
        fields = [
            "id",
            "event_id",
            "event_type",
            "message_id",
            "status",
            "attempt_count",
            "next_attempt_at",
            "last_status_code",
            "last_error",
            "created_at",
            "completed_at",
            "payload",
            "attempts",
        ]

    @extend_schema_field(OpenApiTypes.OBJECT)
    def get_payload(self, delivery: WebhookDelivery) -> dict:
        return json.loads(delivery.event.body)
