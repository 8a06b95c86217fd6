from __future__ import annotations

import ipaddress

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
