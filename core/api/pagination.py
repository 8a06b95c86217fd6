"""The list envelope (docs/decisions.md#lists): `{"items": [...], "total": int, "has_more": bool}`."""

from __future__ import annotations

from functools import cache

from django.db.models import F, Func, IntegerField, QuerySet, Subquery
from rest_framework import serializers

from core.precompiled import PrecompiledQuery


class PageQuery(serializers.Serializer):
    context_free = True  # validated once per query string and process; not inherited (ApiView.query)

    limit = serializers.IntegerField(min_value=1, max_value=100, default=20)
    offset = serializers.IntegerField(min_value=0, max_value=1_000_000, default=0)


def page(queryset: QuerySet, *, limit: int, offset: int) -> tuple[list, int, bool]:
    """Slice one page. Returns (rows, total, has_more). Two queries whatever the page size."""
    total = queryset.count()
    rows = list(queryset[offset : offset + limit])
    return rows, total, offset + len(rows) < total


@cache
def envelope(item_serializer: type[serializers.Serializer]) -> type[serializers.Serializer]:
    """A named `<Item>Page` serializer for the schema and for rendering."""
    name = item_serializer.__name__.removesuffix("Serializer") + "Page"
    return type(
        name,
        (serializers.Serializer,),
        {
            "items": item_serializer(many=True),
            "total": serializers.IntegerField(),
            "has_more": serializers.BooleanField(),
            "__module__": item_serializer.__module__,
        },
    )


def render_page(item_serializer, rows, total: int, has_more: bool, context: dict | None = None) -> dict:
    return envelope(item_serializer)({"items": rows, "total": total, "has_more": has_more}, context=context or {}).data


PAGE_TOTAL = "page_total"


def counted(queryset: QuerySet) -> QuerySet:
    """The queryset with its total as one more column (PAGE_TOTAL), for `page_compiled`: an uncorrelated
    scalar subquery, which PostgreSQL runs once (an InitPlan), so the page itself still reads only its
    rows through the index."""
    total = queryset.order_by().values(n=Func(F("pk"), function="COUNT"))
    return queryset.annotate(**{PAGE_TOTAL: Subquery(total, output_field=IntegerField())})


def page_compiled(read: PrecompiledQuery, values=(), *, limit: int, offset: int, count) -> tuple[list[dict], int, bool]:
    """As `page()`, in one query of a `PrecompiledQuery` of `counted(<a .values() queryset>)` with page=True:
    rows as dicts, the total, has_more. `count()` answers the total only when an offset past the end
    leaves no row to carry it."""
    names = read.names()[:-1]
    rows = read.rows(values, limit=limit, offset=offset)
    total = rows[0][-1] if rows else (count() if offset else 0)
    return [dict(zip(names, row, strict=False)) for row in rows], total, offset + len(rows) < total
