"""Inbound payment-provider events (docs/decisions.md#payments-webhook-inbound) and outbound webhooks
(docs/decisions.md#outbound-webhooks-and-agent-dispatch)."""

from __future__ import annotations

import uuid

from django.conf import settings
from django.db import models

from signed_delivery.attempts import Attempt

# --- Inbound ---------------------------------------------------------------------------------------


class InboundEventStatus(models.TextChoices):
    PENDING = "pending", "Pending"  # stored, not applied yet
    PROCESSED = "processed", "Processed"  # applied, never again
    IGNORED = "ignored", "Ignored"  # no handler for its type (re-evaluated if it comes again)
    SKIPPED = "skipped", "Skipped"  # older than an event already applied to the same object
    FAILED = "failed", "Failed"  # a handler raised; a re-delivery or `reprocess_payment_events` retries
    REJECTED = "rejected", "Rejected"  # authentic but refused by a handler (e.g. amount mismatch); final


class InboundEvent(models.Model):
    """One provider event, by the provider's event id: applied at most once."""

    id = models.UUIDField(primary_key=True, default=uuid.uuid4, editable=False)
    event_id = models.CharField(max_length=255, unique=True)
    type = models.CharField(max_length=100, db_index=True)
    object_id = models.CharField(max_length=255, blank=True, db_index=True)
    created = models.DateTimeField(help_text="When the provider created the event.")
    payload = models.JSONField()
    status = models.CharField(max_length=20, choices=InboundEventStatus.choices, default=InboundEventStatus.PENDING)
    attempts = models.PositiveIntegerField(default=0)
    last_error = models.TextField(blank=True)
    received_at = models.DateTimeField(auto_now_add=True)
    last_attempt_at = models.DateTimeField(null=True, blank=True)
    processed_at = models.DateTimeField(null=True, blank=True)

    class Meta:
        ordering = ["-received_at"]
        indexes = [models.Index(fields=["status", "-received_at"])]

    def __str__(self) -> str:
        return f"{self.event_id} {self.type} ({self.status})"


class InboundObjectState(models.Model):
    """The newest event applied per provider object, so an older one arriving late cannot roll it back."""

    object_id = models.CharField(max_length=255, primary_key=True)
    last_event_created = models.DateTimeField()
    last_event_id = models.CharField(max_length=255)

    def __str__(self) -> str:
        return f"{self.object_id} @ {self.last_event_created:%Y-%m-%d %H:%M:%S}"


class InboundOutcome(models.TextChoices):
    RECEIVED = "received", "Received"  # stored; processing did not finish
    TOO_LARGE = "too_large", "Body too large"
    INVALID_SIGNATURE = "invalid_signature", "Invalid signature"
    INVALID_EVENT = "invalid_event", "Not an event"
    PROCESSED = "processed", "Processed"
    DUPLICATE = "duplicate", "Duplicate"
    IGNORED = "ignored", "Ignored"
    SKIPPED = "skipped", "Skipped (out of order)"
    FAILED = "failed", "Handler failed"
    REJECTED = "rejected", "Rejected by a handler"


class InboundDelivery(models.Model):
    """Every POST to the payments webhook, stored before anything is processed."""

    id = models.UUIDField(primary_key=True, default=uuid.uuid4, editable=False)
    inbound_event = models.ForeignKey(
        InboundEvent, null=True, blank=True, on_delete=models.SET_NULL, related_name="deliveries"
    )
    event_id = models.CharField(max_length=255, blank=True, db_index=True, help_text="The provider's event id.")
    event_type = models.CharField(max_length=100, blank=True)
    headers = models.JSONField(default=dict)
    body = models.TextField(blank=True)
    body_size = models.PositiveIntegerField(default=0)
    remote_ip = models.GenericIPAddressField(null=True, blank=True)
    signature_valid = models.BooleanField(default=False)
    outcome = models.CharField(max_length=20, choices=InboundOutcome.choices, default=InboundOutcome.RECEIVED)
    error = models.TextField(blank=True)
    received_at = models.DateTimeField(auto_now_add=True)
    finished_at = models.DateTimeField(null=True, blank=True)

    class Meta:
        ordering = ["-received_at"]
        verbose_name_plural = "inbound deliveries"

    def __str__(self) -> str:
        return f"{self.received_at:%Y-%m-%d %H:%M:%S} {self.event_id or '-'} {self.outcome}"


# --- Outbound --------------------------------------------------------------------------------------


class WebhookSubscription(models.Model):
    """A user's endpoint that receives the events it subscribed to, signed per Standard Webhooks."""

    id = models.UUIDField(primary_key=True, default=uuid.uuid4, editable=False)
    owner = models.ForeignKey(settings.AUTH_USER_MODEL, on_delete=models.CASCADE, related_name="webhook_subscriptions")
    url = models.URLField(max_length=2000)
    events = models.JSONField(default=list, help_text="Event types this endpoint receives.")
    description = models.CharField(max_length=500, blank=True)
    # Kept in clear because every delivery is signed with it; never shown after it was issued.
    secret = models.CharField(max_length=100)
    previous_secret = models.CharField(max_length=100, blank=True)
    previous_secret_expires_at = models.DateTimeField(null=True, blank=True)
    is_active = models.BooleanField(default=True)
    disabled_reason = models.CharField(max_length=300, blank=True)
    disabled_at = models.DateTimeField(null=True, blank=True)
    created_at = models.DateTimeField(auto_now_add=True)
    updated_at = models.DateTimeField(auto_now=True)

    class Meta:
        ordering = ["-created_at"]
        indexes = [models.Index(fields=["owner", "-created_at", "-id"])]

    def __str__(self) -> str:
        return self.url


class WebhookEvent(models.Model):
    """Something that happened to an owner's objects, with the exact body every delivery sends."""

    id = models.UUIDField(primary_key=True, default=uuid.uuid4, editable=False)
    owner = models.ForeignKey(settings.AUTH_USER_MODEL, on_delete=models.CASCADE, related_name="webhook_events")
    type = models.CharField(max_length=100, db_index=True)
    body = models.TextField(help_text='The JSON body sent: {"type", "timestamp", "data"}.')
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        ordering = ["-created_at"]

    def __str__(self) -> str:
        return f"{self.type} {self.created_at:%Y-%m-%d %H:%M:%S}"


class WebhookDeliveryStatus(models.TextChoices):
    PENDING = "pending", "Pending"  # waiting for its next attempt (next_attempt_at)
    SENDING = "sending", "Sending"  # claimed by a worker
    SUCCEEDED = "succeeded", "Succeeded"
    FAILED = "failed", "Failed"  # attempts exhausted, or the subscription is disabled


class WebhookDelivery(models.Model):
    """One event to one subscription. `message_id` is the `webhook-id` header, the same on every retry."""

    id = models.UUIDField(primary_key=True, default=uuid.uuid4, editable=False)
    event = models.ForeignKey(WebhookEvent, on_delete=models.CASCADE, related_name="deliveries")
    subscription = models.ForeignKey(WebhookSubscription, on_delete=models.CASCADE, related_name="deliveries")
    message_id = models.CharField(max_length=64, unique=True)
    status = models.CharField(
        max_length=20, choices=WebhookDeliveryStatus.choices, default=WebhookDeliveryStatus.PENDING
    )
    attempt_count = models.PositiveIntegerField(default=0)
    next_attempt_at = models.DateTimeField(null=True, blank=True)
    claimed_at = models.DateTimeField(null=True, blank=True)
    last_status_code = models.PositiveIntegerField(null=True, blank=True)
    last_error = models.TextField(blank=True)
    created_at = models.DateTimeField(auto_now_add=True)
    completed_at = models.DateTimeField(null=True, blank=True)

    class Meta:
        ordering = ["-created_at"]
        verbose_name_plural = "webhook deliveries"
        indexes = [
            models.Index(fields=["subscription", "-created_at", "-id"]),
            models.Index(fields=["status", "next_attempt_at"]),
            # The admin change list (docs/decisions.md#admin-change-lists-at-size).
            models.Index(fields=["-created_at", "-id"], name="whdelivery_created_desc"),
        ]

    def __str__(self) -> str:
        return f"{self.message_id} ({self.status})"


class WebhookAttempt(Attempt):
    """One HTTP call of a webhook delivery (see signed_delivery.attempts)."""

    delivery = models.ForeignKey(WebhookDelivery, on_delete=models.CASCADE, related_name="attempts")
