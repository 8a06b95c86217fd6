"""The list envelope of CONTRACT §7: `{"items": [...], "total": int, "has_more": bool}`."""

from __future__ import annotations

from functools import cache

from django.db.models import QuerySet
from rest_framework import serializers


class PageQuery(serializers.Serializer):
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
