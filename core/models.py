from __future__ import annotations

import ipaddress

from django.conf import settings
from django.core.exceptions import ValidationError
from django.db import models

from core.http.ratelimit_rules import RULES

RULE_CHOICES = [("*", "every rule"), *[(name, f"{name} ({rule.rate})") for name, rule in RULES.items()]]


def validate_network(value: str) -> None:
    try:
        ipaddress.ip_network(value, strict=False)
    except ValueError as exc:
        raise ValidationError(f"{value!r} is not an IP address or CIDR network.") from exc


class RateLimitOverride(models.Model):
    """A raised (or lowered) cap for a client address or network, on one rule or on all of them."""

    network = models.CharField(max_length=64, help_text="IP address or CIDR.")
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

    def clean_fields(self, exclude=None):
        # The network is checked here, not by a field validator: a validator is written into the migrations,
        # which then import this module (tests/test_migrations_import_no_app_code.py).
        errors = {}
        try:
            super().clean_fields(exclude)
        except ValidationError as exc:
            errors = exc.update_error_dict(errors)
        if "network" not in (exclude or ()) and "network" not in errors:
            try:
                validate_network(self.network)
            except ValidationError as exc:
                errors["network"] = exc.error_list
        if errors:
            raise ValidationError(errors)


class IdempotencyKey(models.Model):
    """One `Idempotency-Key` of one user: claimed while its request runs, then the response to replay.

    The unique (user, key) pair is the claim: the first INSERT wins, every other copy of the request
    finds the row (core.http.idempotency). `response_status` is null while the first request is in flight.
    """

    user = models.ForeignKey(settings.AUTH_USER_MODEL, on_delete=models.CASCADE, related_name="+")
    key = models.CharField(max_length=255)
    fingerprint = models.CharField(max_length=64, help_text="SHA-256 of method, path, query and canonical body.")
    request = models.CharField(max_length=500, help_text="Method and path of the first request, for reading.")
    locked_at = models.DateTimeField(help_text="When the request holding the claim started.")
    response_status = models.PositiveSmallIntegerField(null=True, blank=True)
    # Sealed (AES-GCM, core.http.idempotency): a response may carry a secret shown once. Inside, JSON text rather
    # than jsonb, which would reorder the keys of the replayed body. (help_text predates the sealing.)
    response_body = models.TextField(blank=True, help_text="JSON; empty when the response had no body.")
    response_headers = models.JSONField(default=dict, blank=True)
    created_at = models.DateTimeField(auto_now_add=True)
    expires_at = models.DateTimeField(db_index=True)

    class Meta:
        constraints = [models.UniqueConstraint(fields=["user", "key"], name="unique_idempotency_key_per_user")]

    def __str__(self) -> str:
        return f"{self.key} {self.request} → {self.response_status or 'in flight'}"


class Counter(models.Model):
    """One shard of an exactly kept count (core.db.counters; docs/decisions.md#lists): the count of `name` is
    the sum of its shards, kept by database triggers in the same transaction as every write that moves a
    row in or out of what it counts. `version` goes up by one with every statement that writes a counted
    row (moved or not): the shards' versions together name one state of the counted rows, under which a
    process may keep a page of them (core.db.pagecache)."""

    name = models.CharField(max_length=100)
    shard = models.PositiveSmallIntegerField()
    value = models.BigIntegerField(default=0)
    # Starts at a random value (the triggers, counters_reconcile): a shard row made again after a reset
    # (TRUNCATE, a restored dump) does not repeat a state a process may still keep pages under.
    version = models.BigIntegerField(default=0, db_default=0)

    class Meta:
        constraints = [models.UniqueConstraint(fields=["name", "shard"], name="unique_counter_shard")]

    def __str__(self) -> str:
        return f"{self.name}[{self.shard}] = {self.value}"
