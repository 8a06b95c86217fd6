"""A brand, its brand kits and its background research items."""

from __future__ import annotations

import uuid

from django.conf import settings
from django.db import models


class ResearchModule(models.TextChoices):
    """Brand-intelligence modules. The research items come in this order (docs/decisions.md#domain-rules); the same
    names are the modules a tracked group can extend to and the audits a team can declare."""

    COMPETITORS = "competitors", "Competitors"
    BRAND_CLASSIFICATION = "brand_classification", "Brand classification"
    PAID_MEDIA = "paid_media", "Paid media"
    ORGANIC_SOCIAL = "organic_social", "Organic social"
    SEO = "seo", "SEO"
    WEBSITE = "website", "Website"


class ResearchStatus(models.TextChoices):
    NOT_STARTED = "not_started", "Not started"
    QUEUED = "queued", "Queued"
    RUNNING = "running", "Running"
    COMPLETED = "completed", "Completed"
    FAILED = "failed", "Failed"


class Brand(models.Model):
    id = models.UUIDField(primary_key=True, default=uuid.uuid4, editable=False)
    owner = models.ForeignKey(settings.AUTH_USER_MODEL, on_delete=models.CASCADE, related_name="brands")
    name = models.CharField(max_length=200)
    website_url = models.URLField(max_length=500, blank=True)
    # Lower-case host without "www." (from website_url unless given); public competitor seeds are
    # keyed by it.
    domain = models.CharField(max_length=253, blank=True, db_index=True)
    industry = models.CharField(max_length=120, blank=True)
    description = models.TextField(blank=True)
    country = models.CharField(max_length=64, blank=True)
    social_links = models.JSONField(default=dict, blank=True)
    # Written by the brand_classification audit (a versioned multi-label object); null until then.
    brand_classification = models.JSONField(null=True, blank=True)
    created_at = models.DateTimeField(auto_now_add=True)
    updated_at = models.DateTimeField(auto_now=True)

    class Meta:
        ordering = ["-created_at", "-id"]
        indexes = [models.Index(fields=["owner", "-created_at"])]

    def __str__(self) -> str:
        return self.name


class BrandKit(models.Model):
    """What a brand looks and sounds like, plus the competitors it names. Linkable to one team."""

    id = models.UUIDField(primary_key=True, default=uuid.uuid4, editable=False)
    owner = models.ForeignKey(settings.AUTH_USER_MODEL, on_delete=models.CASCADE, related_name="brand_kits")
    brand = models.ForeignKey(Brand, on_delete=models.CASCADE, related_name="kits")
    name = models.CharField(max_length=200)
    competitor_names = models.JSONField(default=list, blank=True)
    voice = models.TextField(blank=True)
    tagline = models.CharField(max_length=300, blank=True)
    description = models.TextField(blank=True)
    colors = models.JSONField(default=list, blank=True)
    fonts = models.JSONField(default=list, blank=True)
    logo_url = models.URLField(max_length=500, blank=True)
    audiences = models.JSONField(default=list, blank=True)
    keywords = models.JSONField(default=list, blank=True)
    team = models.ForeignKey("teams.Team", null=True, blank=True, on_delete=models.SET_NULL, related_name="brand_kits")
    linked_at = models.DateTimeField(null=True, blank=True)
    created_at = models.DateTimeField(auto_now_add=True)
    updated_at = models.DateTimeField(auto_now=True)

    class Meta:
        ordering = ["-created_at", "-id"]
        indexes = [models.Index(fields=["owner", "-created_at"]), models.Index(fields=["brand", "-created_at"])]

    def __str__(self) -> str:
        return self.name


class ResearchItem(models.Model):
    """One of a brand's six background research indicators. A missing row reads as not_started."""

    brand = models.ForeignKey(Brand, on_delete=models.CASCADE, related_name="research_items")
    module = models.CharField(max_length=30, choices=ResearchModule.choices)
    status = models.CharField(max_length=20, choices=ResearchStatus.choices, default=ResearchStatus.NOT_STARTED)
    error_message = models.TextField(blank=True)
    # Each queueing draws a new attempt id; a task only acts on the attempt it was sent for, so an
    # older or duplicate delivery of the task does nothing.
    attempt_id = models.UUIDField(null=True, blank=True)
    queued_at = models.DateTimeField(null=True, blank=True)
    started_at = models.DateTimeField(null=True, blank=True)
    finished_at = models.DateTimeField(null=True, blank=True)
    # Times this run was queued: 1 when started, +1 each time the sweep queues it again after it was lost
    # (docs/decisions.md#audit-sweep); at RESEARCH_AUDIT_MAX_ATTEMPTS the sweep fails it instead.
    attempts = models.PositiveSmallIntegerField(default=0, db_default=0)
    updated_at = models.DateTimeField(auto_now=True)

    class Meta:
        ordering = ["brand", "module"]
        constraints = [models.UniqueConstraint(fields=["brand", "module"], name="unique_research_item")]

    def __str__(self) -> str:
        return f"{self.module}: {self.status}"
