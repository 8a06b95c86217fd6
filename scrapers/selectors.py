"""Reads for scraping snapshots."""

from __future__ import annotations

from django.db.models import QuerySet

from core.http.errors import NotFound
from scrapers.models import Snapshot


def snapshot_list(*, status: str | None = None, provider: str | None = None) -> QuerySet[Snapshot]:
    """Snapshots, newest first, without their (possibly large) downloaded results."""
    snapshots = Snapshot.objects.defer("results").order_by("-created_at", "-id")
    if status:
        snapshots = snapshots.filter(status=status)
    if provider:
        snapshots = snapshots.filter(provider=provider)
    return snapshots


def snapshot_get(*, snapshot_id: str) -> Snapshot:
    """The snapshot with this provider id (the newest, should two providers ever reuse one)."""
    snapshot = None
    if len(snapshot_id) <= 100 and "\x00" not in snapshot_id:  # no such id could be stored
        snapshot = Snapshot.objects.defer("results").filter(snapshot_id=snapshot_id).order_by("-created_at").first()
    if snapshot is None:
        raise NotFound("No snapshot with this id.")
    return snapshot
