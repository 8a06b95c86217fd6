"""The query filters of the task list (core.api.filters; docs/decisions.md#list-filters), and its search
(docs/decisions.md#task-search)."""

from __future__ import annotations

import django_filters
from django import forms

from core.api.filters import AmountFilter, DateTimeFilter, FilterSet
from tasks_market.models import Task, TaskStatus
from tasks_market.models.market import CURRENCIES, TaskCategory

Q_MAX_CHARS = 200
SORTS = ("newest", "budget", "deadline", "relevance")
# The search's own parameters: with none of them (and `sort` left `newest`) the list is the plain one.
SEARCH_NAMES = ("category", "currency", "min_budget", "max_budget", "deadline_after", "deadline_before", "q")


class TaskSearchForm(forms.Form):
    """The checks between two parameters, each reported on the parameter that breaks it."""

    def clean(self):
        data = super().clean()
        low, high = data.get("min_budget"), data.get("max_budget")
        if low is not None and high is not None and high < low:
            self.add_error("max_budget", "max_budget must not be less than min_budget")
        after, before = data.get("deadline_after"), data.get("deadline_before")
        if after is not None and before is not None and before < after:
            self.add_error("deadline_before", "deadline_before must not be earlier than deadline_after")
        if data.get("sort") == "relevance" and not (data.get("q") or "").strip():
            self.add_error("sort", "sort=relevance needs a text query (q)")
        return data


def _amount(help_text: str) -> AmountFilter:
    return AmountFilter(max_digits=12, decimal_places=2, help_text=help_text)


class TaskFilter(FilterSet):
    """Parsed only (cached per query string): the list is a read of its own that takes these as values
    (tasks_market.selectors.task_list)."""

    scope = django_filters.ChoiceFilter(
        choices=[("mine", "mine"), ("open", "open")],
        initial="mine",
        help_text="`mine`: tasks you posted; `open`: every open task.",
    )
    status = django_filters.ChoiceFilter(choices=TaskStatus.choices)
    category = django_filters.MultipleChoiceFilter(
        choices=TaskCategory.choices, help_text="Any of these categories (repeat the parameter for several)."
    )
    currency = django_filters.ChoiceFilter(choices=[(code, code) for code in CURRENCIES])
    min_budget = _amount("Budget at least this, in the task's own currency (inclusive).")
    max_budget = _amount("Budget at most this, in the task's own currency (inclusive); not below `min_budget`.")
    deadline_after = DateTimeFilter(help_text="Deadline at or after this (ISO 8601; without an offset, UTC).")
    deadline_before = DateTimeFilter(
        help_text="Deadline at or before this (ISO 8601; without an offset, UTC); not before `deadline_after`."
    )
    q = django_filters.CharFilter(
        max_length=Q_MAX_CHARS,
        help_text="Full-text search of the title, description and requirements: every word must match, in any "
        "form of it (English stemming). Its `total` is counted up to a cap: see `total_exact`.",
    )
    sort = django_filters.ChoiceFilter(
        choices=[(name, name) for name in SORTS],
        initial="newest",
        help_text="`newest` first (the default); `budget`: highest first; `deadline`: soonest first; "
        "`relevance`: best match first (with `q` only). Ties: newest first.",
    )

    class Meta:
        model = Task
        fields = []
        form = TaskSearchForm


def search_of(params: dict) -> dict:
    """The search part of parsed list parameters; empty for the plain list (no filter, newest first)."""
    search = {name: params[name] for name in SEARCH_NAMES if params.get(name) not in (None, "", [])}
    if "q" in search:
        search["q"] = search["q"].strip()
        if not search["q"]:
            del search["q"]
    if params.get("sort", "newest") != "newest":
        search["sort"] = params["sort"]
    return search
