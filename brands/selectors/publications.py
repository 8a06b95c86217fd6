"""Reads of publications."""

from __future__ import annotations

from django.db.models import QuerySet

from brands.models import Brand, Publication


def publications_of(
    brand: Brand,
    *,
    status: str | None = None,
    platform: str | None = None,
    action: str | None = None,
    creative_id=None,
) -> QuerySet[Publication]:
    queryset = Publication.objects.filter(brand=brand).order_by("-created_at", "-id")
    for field, value in (("status", status), ("platform", platform), ("action", action), ("creative_id", creative_id)):
        if value is not None:
            queryset = queryset.filter(**{field: value})
    return queryset
