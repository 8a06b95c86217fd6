"""The query filters of the brands lists (core.api.filters; docs/decisions.md#list-filters)."""

from __future__ import annotations

import django_filters

from brands.models import (
    Artifact,
    BrandCompetitor,
    BrandKit,
    Publication,
    PublicationAction,
    PublicationPlatform,
    PublicationStatus,
    ResearchModule,
)
from core.api.filters import BooleanFilter, FilterSet, UUIDFilter


class PublicationFilter(FilterSet):
    status = django_filters.ChoiceFilter(choices=PublicationStatus.choices)
    platform = django_filters.ChoiceFilter(choices=PublicationPlatform.choices)
    action = django_filters.ChoiceFilter(choices=PublicationAction.choices)
    creative_id = UUIDFilter()

    class Meta:
        model = Publication
        fields = []


class CompetitorFilter(FilterSet):
    # Not a queryset filter: the roster is merged and cached per brand and `removed` (brands.selectors.roster_cache).
    removed = BooleanFilter(
        initial=False, help_text="true: only the removed seed rows (each with override.removed true)."
    )

    class Meta:
        model = BrandCompetitor
        fields = []


class BrandKitFilter(FilterSet):
    brand_id = UUIDFilter(help_text="Only this brand's kits.")

    class Meta:
        model = BrandKit
        fields = []


class ArtifactFilter(FilterSet):
    module = django_filters.ChoiceFilter(choices=ResearchModule.choices)

    class Meta:
        model = Artifact
        fields = []
