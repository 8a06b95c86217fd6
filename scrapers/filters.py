"""The query filters of the snapshot list (core.api.filters; docs/decisions.md#list-filters)."""

from __future__ import annotations

import django_filters

from core.api.filters import FilterSet
from scrapers.models import Snapshot, SnapshotStatus
from scrapers.providers import PROVIDERS


class SnapshotFilter(FilterSet):
    status = django_filters.ChoiceFilter(choices=SnapshotStatus.choices)
    provider = django_filters.ChoiceFilter(choices=[(name, name) for name in PROVIDERS])

    class Meta:
        model = Snapshot
        fields = []
