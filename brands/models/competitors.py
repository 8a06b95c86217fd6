"""Competitors: a shared seed layer and each brand's copies of it (docs/decisions.md#domain-rules).

A seed is a discovered competitor record for a target domain. Public seeds (no owner) are shared by
every brand with that domain; private seeds belong to one user and are seen only by that user's
brands with that domain. A brand's roster reads its seeds through its copies: a copy exists only
where the brand differs from the seed (starred, removed, edited fields, or adopted from elsewhere),
so a plain seed row has no copy and no `override`. Manual additions are copies without a seed.
"""

from __future__ import annotations

import uuid

from django.conf import settings
from django.core.exceptions import ValidationError
from django.db import models

from brands.domain.matching import normalize_name
from brands.models.brand import Brand


class SeedOrigin(models.TextChoices):
    PUBLIC = "public", "Public"
    PRIVATE = "private", "Private"


class CompetitorSource(models.TextChoices):
    """Where a roster row comes from (docs/decisions.md#competitor-rows). Not stored: rows are merged per read."""

    SEO_DISCOVERY = "seo_discovery"
    BRAND_KIT = "brand_kit"


class CompetitorOrigin(models.TextChoices):
    """Where a roster row really came from (docs/decisions.md#competitor-discovery): additive to `source`, whose
    two values stay as they are. A seed records how it was found (`discovered_by`); a manual row is `manual`."""

    DATAFORSEO = "dataforseo"  # DataForSEO Labs' competitors of the brand's domain
    LOCAL_CRAWL = "local_crawl"  # links on the brand's website, fetched on this machine
    DEMO = "demo"  # the demo seed
    ADMIN = "admin"  # typed in the Django admin (and every seed stored before discovery existed)
    MANUAL = "manual"  # added by a person through the API
    BRAND_KIT = "brand_kit"  # a name in a brand kit


# The origins that count as discovered: found in data by a provider, not typed or seeded.
DISCOVERED_ORIGINS = frozenset({CompetitorOrigin.DATAFORSEO.value, CompetitorOrigin.LOCAL_CRAWL.value})
SEED_ORIGINS = [
    (o.value, o.label)
    for o in (CompetitorOrigin.DATAFORSEO, CompetitorOrigin.LOCAL_CRAWL, CompetitorOrigin.DEMO, CompetitorOrigin.ADMIN)
]


class CompetitorData(models.Model):
    name = models.CharField(max_length=200)
    canonical_domain = models.CharField(max_length=253, blank=True)
    website_url = models.CharField(max_length=500, blank=True)
    homepage_url = models.CharField(max_length=500, blank=True)
    website_header_image_url = models.CharField(max_length=500, blank=True)
    description = models.TextField(blank=True)
    notes = models.TextField(blank=True)
    industry = models.CharField(max_length=120, blank=True)
    brand_classification = models.JSONField(null=True, blank=True)
    country = models.CharField(max_length=64, blank=True)
    content_url = models.CharField(max_length=500, blank=True)
    youtube_channel_url = models.CharField(max_length=500, blank=True)
    social_links = models.JSONField(default=dict, blank=True)
    analysis_data = models.JSONField(default=dict, blank=True)
    active_paid_media_platforms = models.JSONField(default=list, blank=True)
    advertiser = models.ForeignKey(
        "brands.Advertiser", null=True, blank=True, on_delete=models.SET_NULL, related_name="+"
    )
    advertiser_resolved_at = models.DateTimeField(null=True, blank=True)
    created_at = models.DateTimeField(auto_now_add=True)
    updated_at = models.DateTimeField(auto_now=True)

    class Meta:
        abstract = True

    def clean(self) -> None:
        """The shapes the API promises (admin edits go through this)."""
        problems = {}
        for field in ("social_links", "analysis_data"):
            if not isinstance(getattr(self, field), dict):
                problems[field] = "Must be a JSON object."
        if self.brand_classification is not None and not isinstance(self.brand_classification, dict):
            problems["brand_classification"] = "Must be a JSON object or null."
        platforms = self.active_paid_media_platforms
        if not isinstance(platforms, list) or not all(isinstance(p, str) for p in platforms):
            problems["active_paid_media_platforms"] = "Must be a list of strings."
        if problems:
            raise ValidationError(problems)


class CompetitorSeed(CompetitorData):
    id = models.UUIDField(primary_key=True, default=uuid.uuid4, editable=False)
    origin = models.CharField(max_length=10, choices=SeedOrigin.choices, default=SeedOrigin.PUBLIC)
    owner = models.ForeignKey(
        settings.AUTH_USER_MODEL,
        null=True,
        blank=True,
        on_delete=models.CASCADE,
        related_name="competitor_seeds",
        help_text="Set on private seeds only.",
    )
    target_domain = models.CharField(max_length=253, db_index=True, help_text="The brand domain it competes with.")
    # How the seed was found (CompetitorOrigin): discovery replaces only the seeds its own provider found.
    discovered_by = models.CharField(
        max_length=20, choices=SEED_ORIGINS, default=CompetitorOrigin.ADMIN, db_default=CompetitorOrigin.ADMIN
    )
    # The normalised name (brands.domain.matching.normalize_name), kept for exact look-ups across targets.
    name_key = models.CharField(max_length=200, blank=True, db_index=True)

    class Meta:
        ordering = ["target_domain", "name"]
        indexes = [models.Index(fields=["target_domain", "owner"])]
        constraints = [
            models.CheckConstraint(
                condition=(
                    models.Q(origin="public", owner__isnull=True) | models.Q(origin="private", owner__isnull=False)
                ),
                name="competitor_seed_owner_matches_origin",
            )
        ]

    def __str__(self) -> str:
        return f"{self.name} (vs {self.target_domain}, {self.origin})"

    def save(self, *args, **kwargs):
        # A derived look-up column, like a slug: it must never disagree with `name`.
        self.name_key = normalize_name(self.name)[:200]
        if kwargs.get("update_fields") is not None and "name" in kwargs["update_fields"]:
            kwargs["update_fields"] = {*kwargs["update_fields"], "name_key"}
        super().save(*args, **kwargs)


class BrandCompetitor(CompetitorData):
    """A brand's copy of a seed (only its differences apply) or a manual row (seed is null).

    For a seed-backed copy the data columns matter only for the fields named in `edited_fields`;
    every other field reads through to the seed, so improvements to the seed still arrive.
    """

    id = models.UUIDField(primary_key=True, default=uuid.uuid4, editable=False)
    # Indexed by unique_brand_seed_copy (brand_id, seed_id), which also serves look-ups by brand.
    brand = models.ForeignKey(Brand, on_delete=models.CASCADE, related_name="competitor_copies", db_index=False)
    seed = models.ForeignKey(CompetitorSeed, null=True, blank=True, on_delete=models.CASCADE, related_name="copies")
    is_starred = models.BooleanField(default=False)
    removed = models.BooleanField(default=False)
    removed_at = models.DateTimeField(null=True, blank=True)
    # Taken into the roster although the seed layer does not list it for this brand: a manual row,
    # or a discovery adopted from elsewhere (docs/decisions.md#competitor-rows, rule 2: not proof of a manual action).
    added = models.BooleanField(default=False)
    edited_fields = models.JSONField(default=list, blank=True)

    class Meta:
        ordering = ["brand", "name"]
        constraints = [
            # NULL seeds (manual rows) never collide; the index also serves the roster's look-ups.
            models.UniqueConstraint(fields=["brand", "seed"], name="unique_brand_seed_copy")
        ]

    def __str__(self) -> str:
        return self.name or str(self.seed_id)
