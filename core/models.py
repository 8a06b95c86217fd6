from __future__ import annotations

import ipaddress

from django.conf import settings
from django.core.exceptions import ValidationError
from django.db import models

from core.ratelimit import RULES, forget_overrides

RULE_CHOICES = [("*", "every rule"), *[(name, f"{name} ({rule.rate})") for name, rule in RULES.items()]]


def validate_network(value: str) -> None:
    try:
        ipaddress.ip_network(value, strict=False)
    except ValueError as exc:
        raise ValidationError(f"{value!r} is not an IP address or CIDR network.") from exc


class RateLimitOverride(models.Model):
    """A raised (or lowered) cap for a client address or network, on one rule or on all of them."""

    network = models.CharField(max_length=64, validators=[validate_network], help_text="IP address or CIDR.")
    rule = models.CharField(max_length=40, choices=RULE_CHOICES, default="*")
    limit = models.PositiveIntegerField(help_text="Requests per window of the rule.")
    reason = models.CharField(max_length=200, blank=True)
    created_at = models.DateTimeField(auto_now_add=True)
    updated_at = models.DateTimeField(auto_now=True)

    class Meta:
        ordering = ["network", "rule"]
        constraints = [models.UniqueConstraint(fields=["network", "rule"], name="unique_override_per_rule")]

    def __str__(self) -> str:
        return f"{self.network} {self.rule} → {self.limit}"

    def save(self, *args, **kwargs):
        self.network = str(ipaddress.ip_network(self.network, strict=False))
        super().save(*args, **kwargs)
        forget_overrides()

    def delete(self, *args, **kwargs):
        result = super().delete(*args, **kwargs)
        forget_overrides()
        return result


class IdempotencyKey(models.Model):
    """One `Idempotency-Key` of one user: claimed while its request runs, then the response to replay.

    The unique (user, key) pair is the claim: the first INSERT wins, every other copy of the request
    finds the row (core.idempotency). `response_status` is null while the first request is in flight.
    """

    user = models.ForeignKey(settings.AUTH_USER_MODEL, on_delete=models.CASCADE, related_name="+")
    key = models.CharField(max_length=255)
    fingerprint = models.CharField(max_length=64, help_text="SHA-256 of method, path, query and canonical body.")
    request = models.CharField(max_length=500, help_text="Method and path of the first request, for reading.")
    locked_at = models.DateTimeField(help_text="When the request holding the claim started.")
    response_status = models.PositiveSmallIntegerField(null=True, blank=True)
    # Sealed (AES-GCM, core.idempotency): a response may carry a secret shown once. Inside, JSON text rather
    # than jsonb, which would reorder the keys of the replayed body. (help_text predates the sealing.)
    response_body = models.TextField(blank=True, help_text="JSON; empty when the response had no body.")
    response_headers = models.JSONField(default=dict, blank=True)
    created_at = models.DateTimeField(auto_now_add=True)
    expires_at = models.DateTimeField(db_index=True)

    class Meta:
        constraints = [models.UniqueConstraint(fields=["user", "key"], name="unique_idempotency_key_per_user")]

    def __str__(self) -> str:
        return f"{self.key} {self.request} → {self.response_status or 'in flight'}"


# --- The `local` payment provider's own state (core.providers.payments.local) ------------------------


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
