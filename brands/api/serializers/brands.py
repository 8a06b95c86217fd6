from __future__ import annotations

import re

from rest_framework import serializers

from brands.api.fields import DomainField, social_links_field
from brands.models import Brand, BrandKit, ResearchModule, ResearchStatus

_HEX_COLOR = re.compile(r"^#[0-9a-fA-F]{6}$")


class BrandClassificationSerializer(serializers.Serializer):
    """The versioned multi-label classification (written by the brand_classification audit)."""

    primary_industry = serializers.CharField(allow_null=True, required=False)
    industries = serializers.ListField(child=serializers.CharField(), required=False)
    business_models = serializers.ListField(child=serializers.CharField(), required=False)
    version = serializers.CharField(required=False)
    source = serializers.CharField(required=False)
    classified_at = serializers.DateTimeField(required=False)
    needs_review = serializers.BooleanField(required=False)


class BrandSerializer(serializers.ModelSerializer):
    brand_classification = BrandClassificationSerializer(allow_null=True)
    social_links = serializers.DictField(child=serializers.CharField())

    class Meta:
        model = Brand
        fields = [
            "id",
            "name",
            "website_url",
            "domain",
            "industry",
            "description",
            "country",
            "social_links",
            "brand_classification",
            "created_at",
            "updated_at",
        ]


class BrandInput(serializers.Serializer):
    name = serializers.CharField(max_length=200)
    website_url = serializers.URLField(max_length=500, required=False, allow_blank=True)
    domain = DomainField(required=False, allow_blank=True, help_text="Defaults to the website's host without www.")
    industry = serializers.CharField(max_length=120, required=False, allow_blank=True)
    description = serializers.CharField(max_length=5000, required=False, allow_blank=True)
    country = serializers.CharField(max_length=64, required=False, allow_blank=True)
    social_links = social_links_field(required=False)


class BrandKitSerializer(serializers.ModelSerializer):
    competitor_names = serializers.ListField(child=serializers.CharField())
    colors = serializers.ListField(child=serializers.CharField())
    fonts = serializers.ListField(child=serializers.CharField())
    audiences = serializers.ListField(child=serializers.CharField())
    keywords = serializers.ListField(child=serializers.CharField())
    team_id = serializers.UUIDField(allow_null=True, help_text="The team the kit is linked to.")

    class Meta:
        model = BrandKit
        fields = [
            "id",
            "brand_id",
            "name",
            "competitor_names",
            "voice",
            "tagline",
            "description",
            "colors",
            "fonts",
            "logo_url",
            "audiences",
            "keywords",
            "team_id",
            "linked_at",
            "created_at",
            "updated_at",
        ]


class BrandKitUpdateInput(serializers.Serializer):
    name = serializers.CharField(max_length=200)
    competitor_names = serializers.ListField(
        child=serializers.CharField(max_length=200),
        max_length=1000,
        required=False,
        help_text="Competitors the brand names itself; merged into the roster as name-only rows. At most 1,000 per "
        "kit, and at most 2,000 across all of the brand's kits (setting BRAND_KIT_NAMES_PER_BRAND_MAX): over it, "
        '422 value_error at loc ["body", "competitor_names"] and nothing changes.',
    )
    voice = serializers.CharField(max_length=5000, required=False, allow_blank=True)
    tagline = serializers.CharField(max_length=300, required=False, allow_blank=True)
    description = serializers.CharField(max_length=5000, required=False, allow_blank=True)
    colors = serializers.ListField(
        child=serializers.CharField(max_length=7), max_length=20, required=False, help_text="#rrggbb"
    )
    fonts = serializers.ListField(child=serializers.CharField(max_length=100), max_length=20, required=False)
    logo_url = serializers.URLField(max_length=500, required=False, allow_blank=True)
    audiences = serializers.ListField(child=serializers.CharField(max_length=200), max_length=50, required=False)
    keywords = serializers.ListField(child=serializers.CharField(max_length=100), max_length=100, required=False)

    def validate_colors(self, value: list[str]) -> list[str]:
        bad = [c for c in value if not _HEX_COLOR.match(c)]
        if bad:
            raise serializers.ValidationError(f"Colours must look like #1a2b3c; got {bad[0]!r}.", code="hex_color")
        return [c.lower() for c in value]


class BrandKitInput(BrandKitUpdateInput):
    brand_id = serializers.UUIDField(help_text="One of your brands.")


class LinkTeamSerializer(serializers.Serializer):
    kit_id = serializers.UUIDField()
    team_id = serializers.UUIDField()
    brand_id = serializers.UUIDField()
    linked = serializers.BooleanField()
    audits = serializers.ListField(
        child=serializers.ChoiceField(choices=ResearchModule.choices),
        help_text="The audits started: the defaults (brand_classification, competitors, and website when the "
        "brand has a website URL) plus the modules named in the team's config.audits. One that cannot start "
        "is logged and skipped; its research item keeps its previous status. Empty for a paused or cancelled "
        "team, which does no work.",
    )
    audits_not_started = serializers.ListField(
        child=serializers.ChoiceField(choices=ResearchModule.choices),
        help_text="Those of `audits` that could not be sent to the workers (the queue is unreachable): their "
        "research items keep their previous status; start them again with POST .../research/{module}/run. "
        "Empty when every audit started.",
    )


class ResearchItemSerializer(serializers.Serializer):
    module = serializers.ChoiceField(choices=ResearchModule.choices)
    status = serializers.ChoiceField(choices=ResearchStatus.choices)
    error_message = serializers.CharField(allow_null=True)
    updated_at = serializers.DateTimeField(allow_null=True, help_text="Null while not_started.")


class SocialReadinessSerializer(serializers.Serializer):
    state = serializers.ChoiceField(
        choices=["pending", "ready", "needs_connection"],
        help_text="pending: no kit of the brand is linked to a team; needs_connection: the linked team has no "
        "connected account; ready: it has one.",
    )
    kit_id = serializers.UUIDField(allow_null=True)


class ResearchStatusSerializer(serializers.Serializer):
    items = ResearchItemSerializer(
        many=True,
        help_text="Always six, in this order: competitors, brand_classification, paid_media, organic_social, "
        "seo, website.",
    )
    social_readiness = SocialReadinessSerializer()
