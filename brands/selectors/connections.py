"""Reads of connected accounts (docs/decisions.md#connected-accounts)."""

from __future__ import annotations

from django.db.models import QuerySet

from brands.models import Brand, ConnectedAccount


def connections_of(brand: Brand) -> QuerySet[ConnectedAccount]:
    return ConnectedAccount.objects.filter(brand=brand).order_by("-created_at", "-id")
