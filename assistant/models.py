from __future__ import annotations

import uuid

from django.conf import settings
from django.db import models
from django.utils import timezone


class Assistant(models.Model):
    """A user's assistant: one per user, created by their first message, deleted with its history."""

    id = models.UUIDField(primary_key=True, default=uuid.uuid4, editable=False)
    user = models.OneToOneField(settings.AUTH_USER_MODEL, on_delete=models.CASCADE, related_name="assistant")
    created_at = models.DateTimeField(default=timezone.now)

    class Meta:
        ordering = ["-created_at"]

    def __str__(self) -> str:
        return f"Assistant of {self.user}"


class AssistantMessage(models.Model):
    class Role(models.TextChoices):
        USER = "user", "User"
        ASSISTANT = "assistant", "Assistant"

    class MessageType(models.TextChoices):
        TEXT = "text", "Text"
        IMAGE = "image", "Image"  # the message carries image attachments

    id = models.UUIDField(primary_key=True, default=uuid.uuid4, editable=False)
    assistant = models.ForeignKey(Assistant, on_delete=models.CASCADE, related_name="messages")
    role = models.CharField(max_length=16, choices=Role.choices)
    content = models.TextField()
    message_type = models.CharField(max_length=16, choices=MessageType.choices, default=MessageType.TEXT)
    attachments = models.JSONField(default=list, blank=True)
    model = models.CharField(max_length=100, blank=True, help_text="The language model that wrote a reply.")
    created_at = models.DateTimeField(default=timezone.now)

    class Meta:
        ordering = ["-created_at", "-id"]
        indexes = [models.Index(fields=["assistant", "-created_at", "-id"])]

    def __str__(self) -> str:
        return f"{self.role}: {self.content[:60]}"


class ImageGeneration(models.Model):
    class Status(models.TextChoices):
        PENDING = "pending", "Pending"
        SUCCEEDED = "succeeded", "Succeeded"
        FAILED = "failed", "Failed (credits given back)"

    id = models.UUIDField(primary_key=True, default=uuid.uuid4, editable=False)
    user = models.ForeignKey(settings.AUTH_USER_MODEL, on_delete=models.CASCADE, related_name="image_generations")
    conversation_id = models.UUIDField()
    model = models.CharField(max_length=100)
    prompt = models.TextField()
    status = models.CharField(max_length=16, choices=Status.choices, default=Status.PENDING)
    credit_cost = models.PositiveIntegerField()
    storage_name = models.CharField(max_length=255, blank=True)
    error = models.TextField(blank=True)
    created_at = models.DateTimeField(default=timezone.now)
    completed_at = models.DateTimeField(null=True, blank=True)

    class Meta:
        ordering = ["-created_at"]
        indexes = [
            models.Index(fields=["user", "-created_at"]),
            models.Index(fields=["user", "conversation_id"]),
        ]

    def __str__(self) -> str:
        return f"{self.model}: {self.prompt[:60]}"


class CreditBalance(models.Model):
    """A user's credits, which pay for image generation: what their ledger (CreditTransaction) adds up to.
    The row appears with the first credit; an account without one has 0. Changed only by
    assistant.services.credits.credit_apply, one conditional UPDATE, so it never goes below zero."""

    user = models.OneToOneField(
        settings.AUTH_USER_MODEL, primary_key=True, on_delete=models.CASCADE, related_name="credit_balance"
    )
    credits = models.PositiveIntegerField(default=0)

    def __str__(self) -> str:
        return f"{self.credits} credits for {self.user_id}"


class CreditTransaction(models.Model):
    """The credit ledger: every change of a user's balance, with the balance it left and why."""

    class Kind(models.TextChoices):
        GRANT = "grant", "Grant on registration"
        PURCHASE = "purchase", "Purchase of a credit pack"
        IMAGE_GENERATION = "image_generation", "Image generation"
        IMAGE_REFUND = "image_refund", "Refund of a failed image generation"
        ADJUSTMENT = "adjustment", "Adjustment by staff"
        ASSISTANT_MESSAGE = "assistant_message", "Assistant message"
        ASSISTANT_REFUND = "assistant_refund", "Refund of a failed assistant reply"

    id = models.UUIDField(primary_key=True, default=uuid.uuid4, editable=False)
    user = models.ForeignKey(settings.AUTH_USER_MODEL, on_delete=models.CASCADE, related_name="credit_transactions")
    delta = models.IntegerField()
    kind = models.CharField(max_length=32, choices=Kind.choices)
    reason = models.CharField(max_length=500, help_text="Why the balance changed, in words.")
    reference = models.CharField(max_length=100, blank=True, help_text="What it concerns, e.g. a generation id.")
    balance_after = models.PositiveIntegerField()
    actor = models.ForeignKey(
        settings.AUTH_USER_MODEL,
        null=True,
        blank=True,
        on_delete=models.SET_NULL,
        related_name="+",
        help_text="The staff member who made an adjustment.",
    )
    created_at = models.DateTimeField(default=timezone.now)

    class Meta:
        ordering = ["-created_at"]
        indexes = [models.Index(fields=["user", "-created_at", "-id"])]
        constraints = [models.CheckConstraint(condition=~models.Q(delta=0), name="credit_transaction_delta_nonzero")]

    def __str__(self) -> str:
        return f"{self.delta:+d} for {self.user_id} ({self.kind})"


class CreditTopUp(models.Model):
    """A credit pack bought through the payment provider. Its credits are added once, when the payment succeeds."""

    class Status(models.TextChoices):
        REQUIRES_PAYMENT = "requires_payment", "Requires payment"
        SUCCEEDED = "succeeded", "Succeeded (credited)"
        FAILED = "failed", "Failed"

    id = models.UUIDField(primary_key=True, default=uuid.uuid4, editable=False)
    user = models.ForeignKey(settings.AUTH_USER_MODEL, on_delete=models.CASCADE, related_name="credit_top_ups")
    pack = models.CharField(max_length=40)
    credits = models.PositiveIntegerField()
    provider = models.CharField(max_length=20)
    provider_payment_id = models.CharField(max_length=255, unique=True)
    amount = models.DecimalField(max_digits=12, decimal_places=2)
    currency = models.CharField(max_length=3)
    status = models.CharField(max_length=20, choices=Status.choices, default=Status.REQUIRES_PAYMENT)
    client_secret = models.CharField(max_length=255, blank=True)
    checkout_url = models.URLField(max_length=2000, blank=True)
    created_at = models.DateTimeField(default=timezone.now)
    credited_at = models.DateTimeField(null=True, blank=True)

    class Meta:
        ordering = ["-created_at"]
        indexes = [models.Index(fields=["user", "-created_at"])]

    def __str__(self) -> str:
        return f"{self.pack} ({self.credits} credits) for {self.user_id}: {self.status}"
