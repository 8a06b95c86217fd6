"""A brand's competitor roster: seed layer + the brand's copies + brand-kit names (docs/decisions.md#domain-rules).

- Seed rows: the seeds for the brand's domain (public ones, and the owner's private ones), each
  read through the brand's copy of it when there is one: a field named in the copy's
  `edited_fields` comes from the copy, every other field from the seed. A copy of a seed outside
  that layer shows only when it was `added` (adopted); otherwise it waits until the seed applies.
- Manual rows: copies without a seed.
- Brand-kit rows: every name of every kit of the brand (oldest kit first), name only, with the
  stable id uuid5(kit id, normalised name), unless it duplicates a discovered row or an earlier kit
  name (brands.domain.matching; the discovered row wins). Removed rows do not hide kit names.
- Active roster order: starred first, then seo_discovery before brand_kit, then name.

Speed: a roster can hold thousands of rows. The discovered rows come rendered as JSON text
(brands.selectors.competitor_rows: by PostgreSQL itself); Python merges the kit names, sorts and
joins. Three queries whatever the size: the discovered rows, the kits' names, and the brand (read by
the caller).
"""

from __future__ import annotations

import json
import uuid
from collections.abc import Iterable
from dataclasses import dataclass
from datetime import datetime
from typing import Any
from uuid import UUID

from brands.domain.matching import NameIndex, identity_keys, normalize_name
from brands.models import Brand, BrandCompetitor, BrandKit, CompetitorOrigin, CompetitorSeed, CompetitorSource
from brands.selectors.competitor_rows import (
    TEXT_FIELDS,
    Row,
    brand_seeds,
    discovered_row,
    discovered_rows,
    iso,
    seed_row_id,
)
from brands.selectors.roster_cache import cached_bytes, roster_slot
from core.http.errors import NotFound

__all__ = ["brand_seeds", "seed_row_id"]  # re-exported for services


def kit_row_id(kit_id: UUID, name_key: str) -> UUID:
    return uuid.uuid5(kit_id, name_key)


def _kit_row_json(brand: Brand, kit_id: UUID, created_at: datetime, updated_at: datetime, name: str, key: str) -> str:
    """A brand_kit row: name and identity only (docs/decisions.md#competitor-rows, rule 4)."""
    row: dict[str, Any] = {
        "brand_id": str(brand.id),
        "name": name,
        "id": str(kit_row_id(kit_id, key)),
        "seed_id": None,
        "seed_origin": None,
        "is_seed": False,
        "override": None,
        "advertiser_id": None,
        "advertiser_resolved_at": None,
        "identity_resolved": False,
        **dict.fromkeys(TEXT_FIELDS),
        "brand_classification": None,
        "is_starred": False,
        "social_links": {},
        "analysis_data": {},
        "brand_intelligence_advertiser_id": None,
        "active_paid_media_platforms": [],
        "created_at": iso(created_at),
        "updated_at": iso(updated_at),
        "source": CompetitorSource.BRAND_KIT.value,
        "origin": CompetitorOrigin.BRAND_KIT.value,
    }
    return json.dumps(row, ensure_ascii=False, separators=(",", ":"))


KitNames = tuple[UUID, list[str], datetime, datetime]  # a kit's id, competitor_names, created_at, updated_at


def merge_kit_names(
    discovered_keys: Iterable[str], kits: Iterable[KitNames], *, discovered_names: Iterable[str] = ()
) -> list[tuple[str, ...]]:
    """The roster merge (docs/decisions.md#domain-rules) as a pure function of its inputs: the kit names
    (kits oldest first) that duplicate neither a discovered row (the discovered row wins) nor an earlier kit name, as
    sort-ready tuples (casefolded name, row id, name, key, kit id, created_at, updated_at) in roster
    order. A duplicate is what discovery's own rule calls one company (brands.domain.matching.same_company): a
    shared identity key ("Ford Motor Company" and "Ford", "Pepsi Co" and "PepsiCo", from `discovered_names`),
    or the fuzzy rule on the normalised names. Building and querying brands.domain.matching.NameIndex is about
    linear in the names; the result depends on nothing else, so it can be cached per input."""
    index = NameIndex(discovered_keys)
    identities: set[str] = set()
    for name in discovered_names:
        identities |= identity_keys(name)
    kit_rows = []
    for kit_id, names, created_at, updated_at in kits:
        for name in names:
            key, names_of = normalize_name(name), identity_keys(name)
            if names_of & identities or index.match(key) is not None:
                continue
            index.add(key)
            identities |= names_of
            kit_rows.append((name.casefold(), str(kit_row_id(kit_id, key)), name, key, kit_id, created_at, updated_at))
    kit_rows.sort()
    return kit_rows


def competitor_roster_json(brand: Brand, *, removed: bool = False) -> str:
    """The roster as a JSON array: the active roster, or (removed=True) only the removed seed rows
    (docs/decisions.md#competitor-rows, rule 3)."""
    discovered: list[Row] = sorted(
        discovered_rows(brand, removed=removed), key=lambda r: (not r.is_starred, r.name.casefold(), r.tiebreak)
    )
    parts = [r.json for r in discovered]
    if not removed:
        kits = BrandKit.objects.filter(brand=brand).order_by("created_at", "id")
        kit_rows = merge_kit_names(
            (r.key for r in discovered),
            kits.values_list("id", "competitor_names", "created_at", "updated_at"),
            discovered_names=(r.name for r in discovered),
        )
        parts += [_kit_row_json(brand, k[4], k[5], k[6], k[2], k[3]) for k in kit_rows]
    return "[" + ",".join(parts) + "]"


def competitor_roster_bytes(brand: Brand, *, removed: bool = False, gzip: bool = False) -> bytes | None:
    """competitor_roster_json as UTF-8 bytes, from the cache while no write has touched the brand's
    roster since (brands.selectors.roster_cache); `gzip` gives the compressed copy (None when too small)."""
    slot = roster_slot(brand.id, removed=removed)  # the generations first, then the database
    return cached_bytes(slot, lambda: competitor_roster_json(brand, removed=removed).encode(), gzip=gzip)


def competitor_roster(brand: Brand, *, removed: bool = False) -> list[dict[str, Any]]:
    """The roster as dicts (for audits and services)."""
    return json.loads(competitor_roster_json(brand, removed=removed))


def competitor_row(brand: Brand, *, seed: CompetitorSeed | None, copy: BrandCompetitor | None) -> dict[str, Any]:
    """One discovered row, rendered exactly as in the roster."""
    return discovered_row(brand, seed=seed, copy=copy)


def active_discovered_names(brand: Brand) -> NameIndex:
    """The normalised names of the brand's active discovered rows (for duplicate checks)."""
    return NameIndex(r.key for r in discovered_rows(brand, removed=False))


# --- One row, for writes --------------------------------------------------------------------------


@dataclass
class ResolvedCompetitor:
    """What a competitor id points at: a copy (seed-backed or manual), a bare seed, or a kit name."""

    copy: BrandCompetitor | None = None
    seed: CompetitorSeed | None = None
    kit: BrandKit | None = None

    @property
    def is_kit_name(self) -> bool:
        return self.kit is not None


def resolve_competitor(brand: Brand, competitor_id: UUID) -> ResolvedCompetitor:
    copy = BrandCompetitor.objects.select_related("seed").filter(brand=brand, id=competitor_id).first()
    if copy is not None:
        return ResolvedCompetitor(copy=copy, seed=copy.seed)
    for seed_id in brand_seeds(brand).values_list("id", flat=True):
        if seed_row_id(brand.id, seed_id) == competitor_id:
            return ResolvedCompetitor(seed=CompetitorSeed.objects.get(id=seed_id))
    for kit in brand.kits.only("id", "competitor_names"):
        for name in kit.competitor_names:
            if kit_row_id(kit.id, normalize_name(name)) == competitor_id:
                return ResolvedCompetitor(kit=kit)
    raise NotFound("No such competitor.")
