"""The query filters of the team list (core.api.filters; docs/decisions.md#list-filters)."""

from __future__ import annotations

import django_filters

from core.api.filters import FilterSet
from teams.models import Team, TeamStatus


class TeamFilter(FilterSet):
    status = django_filters.ChoiceFilter(choices=TeamStatus.choices)

    class Meta:
        model = Team
        fields = []
