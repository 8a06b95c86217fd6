"""Publications: a creative published to, or saved at, a social platform (docs/decisions.md#states)."""

from __future__ import annotations

import uuid

from django.db import models

from brands.models.brand import Brand


class PublicationAction(models.TextChoices):
    SOCIAL_PUBLISH = "social_publish", "Publish a social post"
    META_CREATIVE_SAVE = "meta_creative_save", "Save as an ad creative"


class PublicationPlatform(models.TextChoices):
    FACEBOOK = "facebook", "Facebook"
    INSTAGRAM = "instagram", "Instagram"
    LINKEDIN = "linkedin", "LinkedIn"


class PublicationStatus(models.TextChoices):
    PREFLIGHT = "preflight", "Preflight"
    QUEUED = "queued", "Queued"
    PROCESSING = "processing", "Processing"
    SUCCEEDED = "succeeded", "Succeeded"
    FAILED = "failed", "Failed"
    NEEDS_ATTENTION = "needs_attention", "Needs attention"
    CANCELLED = "cancelled", "Cancelled"


class PublicationPhase(models.TextChoices):
    """Finer steps inside a status (documented in the API schema)."""

    AWAITING_CONFIRMATION = "awaiting_confirmation", "Preflight: waiting for confirmation"
    WAITING_FOR_WORKER = "waiting_for_worker", "Queued: waiting for the publisher"
    SCHEDULED = "scheduled", "Queued: waiting for its scheduled time"
    AWAITING_APPROVAL = "awaiting_approval", "Queued: waiting for the brand owner's approval (supervised team)"
    VALIDATING = "validating", "Processing: validating the payload"
    PUBLISHING = "publishing", "Processing: handing it to the platform"
    PUBLISHED = "published", "Succeeded: live on the platform"
    SIMULATED = "simulated", "Succeeded: simulated by the local provider, posted nowhere"
    REJECTED = "rejected", "Failed: the platform refused it"
    ACTION_REQUIRED = "action_required", "Needs attention: fix the creative, then publish again"
    CANCELLED_BY_USER = "cancelled_by_user", "Cancelled by its owner"
    EXPIRED = "expired", "Cancelled: expires_at passed (not confirmed, or not published in time)"


ACTIVE_STATUSES = (PublicationStatus.PREFLIGHT, PublicationStatus.QUEUED, PublicationStatus.PROCESSING)


class Publication(models.Model):
    id = models.UUIDField(primary_key=True, default=uuid.uuid4, editable=False)
    brand = models.ForeignKey(Brand, on_delete=models.CASCADE, related_name="publications")
    creative_id = models.UUIDField(db_index=True)
    variant_index = models.PositiveIntegerField(default=0)
    action = models.CharField(max_length=30, choices=PublicationAction.choices)
    platform = models.CharField(max_length=20, choices=PublicationPlatform.choices)
    status = models.CharField(max_length=20, choices=PublicationStatus.choices, default=PublicationStatus.PREFLIGHT)
    phase = models.CharField(
        max_length=30, choices=PublicationPhase.choices, default=PublicationPhase.AWAITING_CONFIRMATION
    )
    payload = models.JSONField(default=dict, help_text="The canonical payload that is published.")
    payload_hash = models.CharField(max_length=64, help_text="sha256 of the canonical JSON of the payload.")
    destination_id = models.CharField(max_length=200)
    destination_label = models.CharField(max_length=200, blank=True)
    preview = models.JSONField(default=dict)
    warnings = models.JSONField(default=list, blank=True)
    expires_at = models.DateTimeField()
    # When to publish (null: as soon as confirmed). Until then a confirmed publication is queued, phase `scheduled`.
    scheduled_at = models.DateTimeField(null=True, blank=True)
    confirmed_at = models.DateTimeField(null=True, blank=True)
    completed_at = models.DateTimeField(null=True, blank=True)
    remote_id = models.CharField(max_length=200, blank=True)
    permalink = models.CharField(max_length=500, blank=True)
    error_code = models.CharField(max_length=50, blank=True)
    error_message = models.TextField(blank=True)
    created_at = models.DateTimeField(auto_now_add=True)
    updated_at = models.DateTimeField(auto_now=True)

    class Meta:
        ordering = ["-created_at", "-id"]
        indexes = [
            models.Index(fields=["brand", "-created_at"]),
            models.Index(fields=["status", "expires_at"]),
        ]
        constraints = [
            # A payload (creative, variant, platform, destination, preview) is published once per brand: the
            # confirm answers a second one with the first (docs/decisions.md#publication-once-per-payload).
            models.UniqueConstraint(
                fields=["brand", "payload_hash"],
                condition=models.Q(status__in=["queued", "processing", "succeeded"]),
                name="publication_once_per_payload",
            ),
        ]

    def __str__(self) -> str:
        return f"{self.action} to {self.platform} ({self.status})"


class LocalPublishedPost(models.Model):
    """What the local publishing provider "published": the post as the platform would hold it."""

    id = models.UUIDField(primary_key=True, default=uuid.uuid4, editable=False)
    publication = models.OneToOneField(Publication, on_delete=models.CASCADE, related_name="local_post")
    platform = models.CharField(max_length=20, choices=PublicationPlatform.choices)
    action = models.CharField(max_length=30, choices=PublicationAction.choices)
    destination_id = models.CharField(max_length=200)
    remote_id = models.CharField(max_length=64, unique=True)
    payload = models.JSONField(default=dict)
    payload_hash = models.CharField(max_length=64)
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        ordering = ["-created_at"]

    def __str__(self) -> str:
        return self.remote_id
