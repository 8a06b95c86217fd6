"""Cache invalidation only (no business rules here: they live in services): ORM saves and deletes of what a
competitors roster is built from mark the cached roster stale after commit (brands.selectors.roster_cache).
Bulk writes send no signals; the services that make them call roster_cache themselves."""

from __future__ import annotations

from django.db.models.signals import post_delete, post_save

from brands.models import Advertiser, Brand, BrandCompetitor, BrandKit, CompetitorSeed, TrackedGroup
from brands.selectors.roster_cache import roster_changed, shared_competitors_changed


def _brand_row(sender, instance, **kwargs) -> None:
    roster_changed(instance.id)


def _brand_child(sender, instance, **kwargs) -> None:
    roster_changed(instance.brand_id)


def _shared(sender, instance, **kwargs) -> None:
    shared_competitors_changed()


def connect() -> None:
    for signal in (post_save, post_delete):
        signal.connect(_brand_row, sender=Brand, dispatch_uid=f"roster-brand-{signal is post_save}")
        for model in (BrandKit, BrandCompetitor, TrackedGroup):
            signal.connect(_brand_child, sender=model, dispatch_uid=f"roster-{model.__name__}-{signal is post_save}")
        signal.connect(_shared, sender=CompetitorSeed, dispatch_uid=f"roster-seed-{signal is post_save}")
    # Deleting an advertiser nulls it on seeds and copies with an UPDATE that sends no signal.
    post_delete.connect(_shared, sender=Advertiser, dispatch_uid="roster-advertiser-delete")
