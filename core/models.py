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
