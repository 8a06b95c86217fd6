"""The query filters of the task list (core.api.filters; docs/decisions.md#list-filters)."""

from __future__ import annotations

import django_filters

from core.api.filters import FilterSet
from tasks_market.models import Task, TaskStatus


class TaskFilter(FilterSet):
    """Parsed only (cached per query string): the list is a compiled read that takes `scope` and `status`
    as values (tasks_market.api.views.tasks)."""

    scope = django_filters.ChoiceFilter(
        choices=[("mine", "mine"), ("open", "open")],
        initial="mine",
        help_text="`mine`: tasks you posted; `open`: every open task.",
    )
    status = django_filters.ChoiceFilter(choices=TaskStatus.choices)

    class Meta:
        model = Task
        fields = []
