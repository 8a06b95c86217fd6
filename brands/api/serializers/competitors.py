from __future__ import annotations

from rest_framework import serializers

from brands.api.fields import DomainField, social_links_field
from brands.api.serializers.brands import BrandClassificationSerializer
from brands.models import CompetitorOrigin, CompetitorSource, SeedOrigin


class CompetitorOverrideSerializer(serializers.Serializer):
    """This copy's difference from its seed. `added` also covers adopted discoveries; only
    `analysis_data.added_manually` says a person added the row."""

    added = serializers.BooleanField()
    removed = serializers.BooleanField()
    starred = serializers.BooleanField()
    edited_fields = serializers.ListField(child=serializers.CharField())


class CompetitorSerializer(serializers.Serializer):
    """A roster row. The list view renders these rows as built by brands.selectors.competitors."""

    brand_id = serializers.UUIDField()
    name = serializers.CharField()
    id = serializers.UUIDField()
    seed_id = serializers.UUIDField(allow_null=True)
    seed_origin = serializers.ChoiceField(choices=SeedOrigin.choices, allow_null=True)
    is_seed = serializers.BooleanField()
    override = CompetitorOverrideSerializer(
        allow_null=True, help_text="Null when the brand's copy differs from nothing (e.g. a plain seed row)."
    )
    advertiser_id = serializers.UUIDField(allow_null=True)
    advertiser_resolved_at = serializers.DateTimeField(allow_null=True)
    identity_resolved = serializers.BooleanField()
    canonical_domain = serializers.CharField(allow_null=True)
    website_url = serializers.CharField(allow_null=True)
    homepage_url = serializers.CharField(allow_null=True)
    website_header_image_url = serializers.CharField(allow_null=True)
    description = serializers.CharField(allow_null=True)
    notes = serializers.CharField(allow_null=True)
    industry = serializers.CharField(allow_null=True)
    brand_classification = BrandClassificationSerializer(allow_null=True)
    country = serializers.CharField(allow_null=True)
    content_url = serializers.CharField(allow_null=True)
    youtube_channel_url = serializers.CharField(allow_null=True)
    is_starred = serializers.BooleanField()
    social_links = serializers.DictField(help_text="Free-form.")
    analysis_data = serializers.DictField(
        help_text="Free-form. `added_manually: true` marks a row a person added through the API."
    )
    brand_intelligence_advertiser_id = serializers.UUIDField(
        allow_null=True, help_text="The advertiser, when the brand tracks it in a brand-intelligence group."
    )
    active_paid_media_platforms = serializers.ListField(child=serializers.CharField())
    created_at = serializers.DateTimeField()
    updated_at = serializers.DateTimeField()
    source = serializers.ChoiceField(
        choices=CompetitorSource.values,
        help_text="seo_discovery rows carry full data and can be starred and edited; brand_kit rows are name-only.",
    )
    origin = serializers.ChoiceField(
        choices=CompetitorOrigin.values,
        help_text="Where the row came from: `dataforseo` and `local_crawl` were discovered in data; `demo` and "
        "`admin` were seeded; `manual` was added by a person (still `source: seo_discovery`, a full-data row); "
        "`brand_kit` is a kit name.",
    )


class CompetitorUpdateInput(serializers.Serializer):
    name = serializers.CharField(max_length=200)
    canonical_domain = DomainField(required=False, allow_blank=True)
    website_url = serializers.URLField(max_length=500, required=False, allow_blank=True)
    homepage_url = serializers.URLField(max_length=500, required=False, allow_blank=True)
    website_header_image_url = serializers.URLField(max_length=500, required=False, allow_blank=True)
    description = serializers.CharField(max_length=5000, required=False, allow_blank=True)
    notes = serializers.CharField(max_length=5000, required=False, allow_blank=True)
    industry = serializers.CharField(max_length=120, required=False, allow_blank=True)
    country = serializers.CharField(max_length=64, required=False, allow_blank=True)
    content_url = serializers.URLField(max_length=500, required=False, allow_blank=True)
    youtube_channel_url = serializers.URLField(max_length=500, required=False, allow_blank=True)
    social_links = social_links_field(required=False)
    active_paid_media_platforms = serializers.ListField(
        child=serializers.CharField(max_length=50), max_length=20, required=False
    )
    is_starred = serializers.BooleanField(required=False)


class CompetitorInput(CompetitorUpdateInput):
    """A manual competitor. `canonical_domain` defaults to the website's host."""
