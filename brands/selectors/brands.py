"""Reads of brands and brand kits, always through their owner (another user's → NotFound)."""

from __future__ import annotations

from uuid import UUID

from django.db.models import QuerySet

from brands.models import Brand, BrandKit
from core.http.errors import NotFound


def brands_of(owner) -> QuerySet[Brand]:
    return Brand.objects.filter(owner=owner).order_by("-created_at", "-id")


def brand_of(owner, brand_id: UUID, *, lock: bool = False) -> Brand:
    queryset = Brand.objects.filter(owner=owner, id=brand_id)
    if lock:
        queryset = queryset.select_for_update()
    brand = queryset.first()
    if brand is None:
        raise NotFound("No such brand.")
    return brand


def kits_of(owner, *, brand_id: UUID | None = None) -> QuerySet[BrandKit]:
    queryset = BrandKit.objects.filter(owner=owner).order_by("-created_at", "-id")
    if brand_id is not None:
        queryset = queryset.filter(brand_id=brand_id)
    return queryset


def kit_of(owner, kit_id: UUID, *, lock: bool = False) -> BrandKit:
    queryset = BrandKit.objects.filter(owner=owner, id=kit_id).select_related("brand")
    if lock:
        queryset = queryset.select_for_update(of=("self",))
    kit = queryset.first()
    if kit is None:
        raise NotFound("No such brand kit.")
    return kit
