from __future__ import annotations

from django.core.validators import RegexValidator
from rest_framework import serializers

from scrapers.models import SnapshotStatus
from scrapers.providers import PROVIDERS


class BlankAsNullCharField(serializers.CharField):
    """Renders an empty stored string as null."""

    def __init__(self, **kwargs):
        kwargs.setdefault("allow_null", True)
        super().__init__(**kwargs)

    def to_representation(self, value):
        return value or None


class SnapshotInputSerializer(serializers.Serializer):
    url = serializers.URLField(max_length=2048, help_text="An http(s) page to collect.")

    def validate_url(self, value: str) -> str:
        if not value.lower().startswith(("http://", "https://")):
            raise serializers.ValidationError("The URL scheme must be http or https.", code="url_scheme")
        if any(ord(char) < 32 or ord(char) == 127 for char in value):
            raise serializers.ValidationError("The URL must not contain control characters.", code="url_chars")
        return value


class SnapshotCreateInput(serializers.Serializer):
    dataset_id = serializers.CharField(
        max_length=100,
        validators=[
            RegexValidator(
                r"^[A-Za-z0-9_.:-]+$",
                "Use letters, digits, '_', '-', '.' and ':' only.",
                code="dataset_id_format",
            )
        ],
        help_text="The provider's dataset (scraper) to run, e.g. `gd_l1viktl72bvl7bjuj0` at Bright Data. "
        "The local provider runs a page-facts scraper whatever the dataset id.",
    )
    # A ListField rather than many=True: the 422 translation reports a ListSerializer's own length
    # errors badly (core/api/validation.py), a ListField's correctly.
    inputs = serializers.ListField(
        child=SnapshotInputSerializer(), min_length=1, max_length=100, help_text="1 to 100 inputs."
    )


class SnapshotSerializer(serializers.Serializer):
    snapshot_id = serializers.CharField(help_text="The provider's id of the snapshot.")
    provider = serializers.ChoiceField(choices=PROVIDERS)
    dataset_id = serializers.CharField()
    inputs = SnapshotInputSerializer(many=True)
    status = serializers.ChoiceField(
        choices=SnapshotStatus.choices,
        help_text="`running` until the provider reports `ready`, or `failed` (the provider failed or "
        "cancelled it, or it was not ready by its deadline).",
    )
    provider_status = BlankAsNullCharField(
        help_text="The provider's own status word as last seen (e.g. starting, running, ready, failed, "
        "canceled); null before the first look."
    )
    records_count = serializers.IntegerField(min_value=0)
    errors_count = serializers.IntegerField(min_value=0, help_text="Inputs the provider could not collect.")
    error_message = BlankAsNullCharField(help_text="Why the snapshot failed, or what went wrong with some inputs.")
    created_by = serializers.UUIDField(source="created_by_id", allow_null=True, help_text="The staff user's id.")
    created_at = serializers.DateTimeField()
    updated_at = serializers.DateTimeField()
    last_polled_at = serializers.DateTimeField(allow_null=True, help_text="When the provider was last asked.")
    next_poll_at = serializers.DateTimeField(
        allow_null=True, help_text="When the poller asks the provider next; null once final."
    )
    poll_attempts = serializers.IntegerField(min_value=0)
    deadline_at = serializers.DateTimeField(help_text="Still running then, the snapshot is marked failed.")
    completed_at = serializers.DateTimeField(allow_null=True, help_text="When it became ready or failed.")
    results_fetched_at = serializers.DateTimeField(
        allow_null=True, help_text="When the records were downloaded from the provider and stored (ready only)."
    )


class SnapshotProgressSerializer(SnapshotSerializer):
    """Renders a `SnapshotState`: the snapshot plus how fresh the answer is."""

    live = serializers.BooleanField(help_text="True when the provider was asked during this request.")
    stale = serializers.BooleanField(
        help_text="True when the provider could not be asked (unreachable, or refusing our credentials): "
        "the stored state is returned and may be out of date."
    )
    stale_reason = serializers.CharField(allow_null=True, help_text="Why the provider could not be asked.")

    def to_representation(self, state):
        data = SnapshotSerializer(context=self.context).to_representation(state.snapshot)
        data.update(live=state.live, stale=state.stale, stale_reason=state.stale_reason)
        return data
