from __future__ import annotations

from datetime import timedelta

from django.utils import timezone
from django.utils.dateparse import parse_datetime
from rest_framework import serializers

from brands.api.fields import OptionalTextField
from brands.models import Publication, PublicationAction, PublicationPhase, PublicationPlatform
from core.api.pagination import CURSOR_MAX_CHARS

SCHEDULE_MIN, SCHEDULE_MAX = timedelta(minutes=1), timedelta(days=365)

PREVIEW_KINDS = ["image", "video", "carousel"]
PHASE_HELP = "Finer step inside the status. " + "; ".join(f"`{v}`: {label}" for v, label in PublicationPhase.choices)


class PreviewCopyInput(serializers.Serializer):
    caption = serializers.CharField(max_length=70_000, required=False, allow_blank=True)
    primary_text = serializers.CharField(max_length=70_000, required=False, allow_blank=True)
    headline = serializers.CharField(max_length=255, required=False, allow_blank=True)
    description = serializers.CharField(max_length=1000, required=False, allow_blank=True)
    link_url = serializers.CharField(max_length=2000, required=False, allow_blank=True)
    call_to_action = serializers.CharField(max_length=50, required=False, allow_blank=True)


class PreviewInput(serializers.Serializer):
    """What will be published. Platform rules (caption length, aspect ratio, media type...) are
    not validation errors: they show up as `warnings` on the preflight and decide the outcome."""

    platform = serializers.ChoiceField(
        choices=PublicationPlatform.choices, required=False, help_text="Defaults to the publication's platform."
    )
    placement = serializers.CharField(
        max_length=50, required=False, allow_blank=True, allow_null=True, help_text="Default feed."
    )
    kind = serializers.ChoiceField(choices=PREVIEW_KINDS, required=False, help_text="Default image.")
    media_url = serializers.CharField(max_length=2000, required=False, allow_blank=True, allow_null=True)
    media_sha256 = serializers.CharField(max_length=64, required=False, allow_blank=True, allow_null=True)
    content_type = serializers.CharField(max_length=100, required=False, allow_blank=True, allow_null=True)
    width = serializers.IntegerField(min_value=1, max_value=100_000, required=False, allow_null=True)
    height = serializers.IntegerField(min_value=1, max_value=100_000, required=False, allow_null=True)
    copy = PreviewCopyInput(required=False)
    duration_s = serializers.FloatField(min_value=0, max_value=86_400, required=False, allow_null=True)


class ScheduledAtField(serializers.DateTimeField):
    """A moment to publish at: its offset must be given (a wall-clock time alone is ambiguous), and it must be
    between SCHEDULE_MIN and SCHEDULE_MAX ahead."""

    def to_internal_value(self, value):
        moment = super().to_internal_value(value)
        given = parse_datetime(value) if isinstance(value, str) else None
        if given is not None and given.tzinfo is None:
            raise serializers.ValidationError("Give the time zone offset (e.g. +01:00 or Z).", code="timezone_missing")
        now = timezone.now()
        if not now + SCHEDULE_MIN <= moment <= now + SCHEDULE_MAX:
            raise serializers.ValidationError("Schedule between a minute and a year ahead.", code="out_of_range")
        return moment


class PublicationCreateInput(serializers.Serializer):
    creative_id = serializers.UUIDField()
    variant_index = serializers.IntegerField(min_value=0, max_value=1000, default=0)
    action = serializers.ChoiceField(choices=PublicationAction.choices)
    platform = serializers.ChoiceField(choices=PublicationPlatform.choices)
    destination_id = serializers.CharField(max_length=200, help_text="The page or account to publish to.")
    destination_label = serializers.CharField(max_length=200, required=False, allow_blank=True)
    preview = PreviewInput()
    scheduled_at = ScheduledAtField(
        required=False,
        allow_null=True,
        help_text="When to publish: an ISO 8601 date-time with its time zone offset (`2026-12-01T09:00:00+01:00`), "
        "between a minute and a year ahead. Absent or null: as soon as it is confirmed.",
    )

    def validate(self, attrs):
        preview_platform = attrs["preview"].get("platform")
        if preview_platform and preview_platform != attrs["platform"]:
            raise serializers.ValidationError(
                "preview.platform must be the publication's platform.", code="platform_mismatch"
            )
        return attrs


class PreviewCopySerializer(serializers.Serializer):
    caption = serializers.CharField()
    primary_text = serializers.CharField()
    headline = serializers.CharField()
    description = serializers.CharField()
    link_url = serializers.CharField()
    call_to_action = serializers.CharField()


class PreviewSerializer(serializers.Serializer):
    platform = serializers.ChoiceField(choices=PublicationPlatform.choices)
    placement = serializers.CharField()
    kind = serializers.ChoiceField(choices=PREVIEW_KINDS)
    media_url = serializers.CharField(allow_null=True)
    media_sha256 = serializers.CharField(allow_null=True)
    content_type = serializers.CharField(allow_null=True)
    width = serializers.IntegerField(allow_null=True)
    height = serializers.IntegerField(allow_null=True)
    copy = PreviewCopySerializer()
    duration_s = serializers.FloatField(allow_null=True, help_text="Seconds.")


class PublicationSerializer(serializers.ModelSerializer):
    phase = serializers.ChoiceField(choices=PublicationPhase.choices, help_text=PHASE_HELP)
    payload_hash = serializers.CharField(help_text="sha256 (hex) of the canonical JSON (sorted keys) of the payload.")
    preview = PreviewSerializer()
    warnings = serializers.ListField(child=serializers.CharField())
    destination_label = OptionalTextField()
    remote_id = OptionalTextField()
    permalink = OptionalTextField()
    error_code = OptionalTextField(
        help_text="On failed / needs_attention: media_missing, copy_missing, link_missing, invalid_media_url, "
        "invalid_media_sha256, unsupported_media_type, caption_too_long, too_many_hashtags, invalid_aspect_ratio, "
        "image_too_small, video_too_long, platform_mismatch, provider_unavailable."
    )
    error_message = OptionalTextField()

    class Meta:
        model = Publication
        fields = [
            "id",
            "creative_id",
            "variant_index",
            "action",
            "platform",
            "status",
            "phase",
            "payload_hash",
            "destination_id",
            "destination_label",
            "expires_at",
            "scheduled_at",
            "created_at",
            "preview",
            "confirmed_at",
            "completed_at",
            "warnings",
            "remote_id",
            "permalink",
            "error_code",
            "error_message",
        ]


class PublicationPageQuery(serializers.Serializer):
    """The publications' own paging (a bare array, larger pages); the filters are brands.filters."""

    context_free = True  # validated once per query string and process (core.api.views.ApiView.query)

    limit = serializers.IntegerField(min_value=1, max_value=200, default=50)
    offset = serializers.IntegerField(min_value=0, max_value=1_000_000, default=0)
    cursor = serializers.CharField(
        required=False,
        allow_blank=True,
        max_length=CURSOR_MAX_CHARS,
        help_text='The cursor of the `Link: <...>; rel="next"` header of the previous page: the page after it, at '
        "the cost of the first. Not with a non-zero `offset`.",
    )
