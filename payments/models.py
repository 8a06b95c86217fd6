"""The `local` payment provider's own state (payments.providers.local), as a real provider would hold it.

The tables keep the names they had when these models lived in `core` (see docs/architecture.md#payments):
the move changed where the code lives, not where the rows are.
"""

from __future__ import annotations

from django.db import models


class LocalPayment(models.Model):
    """A payment intent held by the local payment provider, as a real provider would hold it."""

    class Status(models.TextChoices):
        REQUIRES_PAYMENT = "requires_payment", "Requires payment"
        SUCCEEDED = "succeeded", "Succeeded"
        FAILED = "failed", "Failed"
        CANCELLED = "cancelled", "Cancelled"
        RELEASED = "released", "Released"
        REFUNDED = "refunded", "Refunded"

    id = models.CharField(primary_key=True, max_length=40, editable=False)  # pi_...
    # The caller's key for the create: the same key answers with this row again (Stripe's Idempotency-Key).
    idempotency_key = models.CharField(max_length=255, unique=True, null=True, blank=True, editable=False)
    amount_minor = models.BigIntegerField(help_text="In the currency's minor unit (cents).")
    currency = models.CharField(max_length=3)
    status = models.CharField(max_length=20, choices=Status.choices, default=Status.REQUIRES_PAYMENT)
    client_secret = models.CharField(max_length=100)
    description = models.CharField(max_length=500, blank=True)
    metadata = models.JSONField(default=dict, blank=True)
    created_at = models.DateTimeField(auto_now_add=True)
    updated_at = models.DateTimeField(auto_now=True)

    class Meta:
        db_table = "core_localpayment"
        ordering = ["-created_at"]

    def __str__(self) -> str:
        return f"{self.id} {self.amount_minor} {self.currency} {self.status}"


class LocalSubscription(models.Model):
    """A subscription held by the local payment provider; periods last 30 days."""

    id = models.CharField(primary_key=True, max_length=40, editable=False)  # sub_...
    idempotency_key = models.CharField(max_length=255, unique=True, null=True, blank=True, editable=False)
    customer_email = models.EmailField()
    plan = models.CharField(max_length=100)
    status = models.CharField(max_length=20, default="active")
    cancel_at_period_end = models.BooleanField(default=False)
    current_period_start = models.DateTimeField()
    current_period_end = models.DateTimeField()
    metadata = models.JSONField(default=dict, blank=True)
    created_at = models.DateTimeField(auto_now_add=True)
    updated_at = models.DateTimeField(auto_now=True)

    class Meta:
        db_table = "core_localsubscription"
        ordering = ["-created_at"]

    def __str__(self) -> str:
        return f"{self.id} {self.plan} {self.status}"


class LocalCheckoutSession(models.Model):
    """A hosted checkout page of the local provider (`/checkout/{id}`): the id is the capability.

    One session per payment or subscription; it is used once (paid or declined), or it expires, or its
    payment was cancelled meanwhile. Exactly one of `payment` / `subscription` is set.
    """

    class Status(models.TextChoices):
        OPEN = "open", "Open"
        COMPLETED = "completed", "Completed"  # paid or declined: used

    id = models.CharField(primary_key=True, max_length=64, editable=False)  # secrets.token_urlsafe(32)
    payment = models.OneToOneField(
        LocalPayment, null=True, blank=True, on_delete=models.CASCADE, related_name="checkout_session"
    )
    subscription = models.ForeignKey(
        LocalSubscription, null=True, blank=True, on_delete=models.CASCADE, related_name="checkout_sessions"
    )
    status = models.CharField(max_length=20, choices=Status.choices, default=Status.OPEN)
    outcome = models.CharField(
        max_length=20, blank=True, help_text="What the payer chose: paid, declined, card_declined."
    )
    payee = models.CharField(max_length=200, blank=True, help_text="Who receives the money, as the page shows it.")
    success_url = models.URLField(max_length=2000, blank=True)
    cancel_url = models.URLField(max_length=2000, blank=True)
    expires_at = models.DateTimeField()
    completed_at = models.DateTimeField(null=True, blank=True)
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        db_table = "core_localcheckoutsession"
        ordering = ["-created_at"]
        constraints = [
            models.CheckConstraint(
                condition=models.Q(payment__isnull=False, subscription__isnull=True)
                | models.Q(payment__isnull=True, subscription__isnull=False),
                name="checkout_session_has_one_object",
            )
        ]

    def __str__(self) -> str:
        return f"checkout {self.payment_id or self.subscription_id} {self.status}"
