import json

from django.contrib import admin
from django.core.paginator import Paginator
from django.db import connections
from django.utils.functional import cached_property

from core.http.ratelimit import forget_overrides
from core.models import RateLimitOverride

# Change lists of tables that grow without bound (see docs/decisions.md#admin-change-lists-at-size).
EXACT_COUNT_CAP = 10_000


class BoundedCountPaginator(Paginator):
    """Counts at most EXACT_COUNT_CAP + 1 rows; past that, PostgreSQL's planner estimate of the query.

    A change list's page costs what its first rows cost, not a COUNT(*) over a million rows: below the cap
    the count is exact; above it the page count is approximate (the last pages are still reachable, an
    out-of-range page number answers the last page, as Django's admin does)."""

    @cached_property
    def count(self) -> int:
        queryset = self.object_list
        capped = queryset.order_by()[: EXACT_COUNT_CAP + 1].count()
        if capped <= EXACT_COUNT_CAP:
            return capped
        return max(capped, _planner_estimate(queryset))


def _planner_estimate(queryset) -> int:
    connection = connections[queryset.db]
    if connection.vendor != "postgresql":
        return 0
    sql, params = queryset.order_by().query.sql_with_params()
    with connection.cursor() as cursor:
        cursor.execute(f"EXPLAIN (FORMAT JSON) {sql}", params)
        plan = cursor.fetchone()[0]
    plan = json.loads(plan) if isinstance(plan, str) else plan
    return int(plan[0]["Plan"]["Plan Rows"])


def fixed_values_filter(field: str, values, title: str | None = None) -> type[admin.SimpleListFilter]:
    """A list filter over known values: Django's default for a field without choices runs a
    SELECT DISTINCT over the whole table on every page."""

    class FixedValuesFilter(admin.SimpleListFilter):
        parameter_name = field

        def lookups(self, request, model_admin):
            return [(value, value) for value in values]

        def queryset(self, request, queryset):
            return queryset.filter(**{field: self.value()}) if self.value() else queryset

    FixedValuesFilter.title = title or field.replace("__", " ").replace("_", " ")
    return FixedValuesFilter


@admin.register(RateLimitOverride)
class RateLimitOverrideAdmin(admin.ModelAdmin):
    list_display = ("network", "rule", "limit", "reason", "updated_at")
    list_filter = ("rule",)
    search_fields = ("network", "reason")

    def delete_queryset(self, request, queryset):
        super().delete_queryset(request, queryset)
        forget_overrides()
