"""Writes for a brand's competitors: manual add, star/edit, remove, restore, and discovery.

Seed-backed rows change only through the brand's copy of the seed, which records the difference
(`override`); the seed itself is never edited by a brand. Brand-kit rows are name-only: every
write to one is a 409 `name_only` (change the kit's `competitor_names` instead). A removed seed row
is kept and listed under `?removed=true` until restored. A manual row has no seed to fall back
on, so removing it deletes it (decided here; the interface leaves it open).
"""

from __future__ import annotations

from typing import Any
from uuid import UUID

from django.db import transaction
from django.db.models import Q
from django.utils import timezone

from brands.domain.matching import normalize_domain, normalize_name
from brands.models import (
    DISCOVERED_ORIGINS,
    Advertiser,
    Brand,
    BrandCompetitor,
    CompetitorOrigin,
    CompetitorSeed,
    CompetitorSource,
)
from brands.selectors.brands import brand_of
from brands.selectors.competitors import (
    active_discovered_names,
    brand_seeds,
    competitor_roster,
    competitor_row,
    resolve_competitor,
    seed_row_id,
)
from brands.selectors.roster_cache import roster_changed, shared_competitors_changed
from brands.services.intelligence import advertisers_for_domains, competitors_group_sync
from core.http.errors import Conflict, InvalidState

EDITABLE_FIELDS = (
    "name",
    "canonical_domain",
    "website_url",
    "homepage_url",
    "website_header_image_url",
    "description",
    "notes",
    "industry",
    "country",
    "content_url",
    "youtube_channel_url",
    "social_links",
    "active_paid_media_platforms",
)


class NameOnly(Conflict):
    code = "name_only"
    default_message = "Brand-kit competitors are name-only; change the brand kit's competitor_names instead."


class DuplicateCompetitor(Conflict):
    code = "duplicate_competitor"
    default_message = "The roster already has a competitor with this name."


def _resolve_advertiser(target: BrandCompetitor, domain: str) -> None:
    """The shared advertiser for the row's domain; the row's (user-typed) name stays on the row."""
    if domain:
        target.advertiser = advertisers_for_domains([domain])[domain]
        target.advertiser_resolved_at = timezone.now()
    else:
        target.advertiser = None
        target.advertiser_resolved_at = None


def _copy_for_seed(brand: Brand, seed: CompetitorSeed, *, added: bool = False) -> BrandCompetitor:
    copy, _ = BrandCompetitor.objects.get_or_create(
        brand=brand, seed=seed, defaults={"id": seed_row_id(brand.id, seed.id), "name": seed.name, "added": added}
    )
    return copy


@transaction.atomic
def competitor_add(*, owner, brand_id: UUID, data: dict[str, Any]) -> dict[str, Any]:
    """A manual row: `override.added` and `analysis_data.added_manually` (docs/decisions.md#competitor-rows, rule 2)."""
    brand = brand_of(owner, brand_id, lock=True)
    if active_discovered_names(brand).match(normalize_name(data["name"])) is not None:
        raise DuplicateCompetitor()
    fields = {k: v for k, v in data.items() if k in EDITABLE_FIELDS}
    if not fields.get("canonical_domain") and fields.get("website_url"):
        fields["canonical_domain"] = normalize_domain(fields["website_url"])
    now = timezone.now()
    copy = BrandCompetitor(
        brand=brand,
        seed=None,
        added=True,
        is_starred=data.get("is_starred", False),
        analysis_data={"added_manually": True, "added_by": str(owner.id), "added_at": now.isoformat()},
        **fields,
    )
    _resolve_advertiser(copy, copy.canonical_domain)
    copy.save()
    return competitor_row(brand, seed=None, copy=copy)


@transaction.atomic
def competitor_update(*, owner, brand_id: UUID, competitor_id: UUID, changes: dict[str, Any]) -> dict[str, Any]:
    """Star/unstar and edit. On a seed row the edit lands in the brand's copy; a field edited back
    to the seed's value stops being an edit."""
    brand = brand_of(owner, brand_id, lock=True)
    target = resolve_competitor(brand, competitor_id)
    if target.is_kit_name:
        raise NameOnly()
    seed = target.seed
    copy = target.copy or _copy_for_seed(brand, seed)
    if "is_starred" in changes:
        copy.is_starred = changes["is_starred"]
    edited = list(copy.edited_fields)
    for field in EDITABLE_FIELDS:
        if field not in changes:
            continue
        setattr(copy, field, changes[field])
        if seed is None:
            continue
        if changes[field] == getattr(seed, field):
            edited = [f for f in edited if f != field]
        elif field not in edited:
            edited.append(field)
    copy.edited_fields = edited
    if "canonical_domain" in changes:
        _resolve_advertiser(copy, copy.canonical_domain)
    copy.save()
    return competitor_row(brand, seed=seed, copy=copy)


@transaction.atomic
def competitor_remove(*, owner, brand_id: UUID, competitor_id: UUID) -> None:
    brand = brand_of(owner, brand_id, lock=True)
    target = resolve_competitor(brand, competitor_id)
    if target.is_kit_name:
        raise NameOnly()
    if target.seed is None:
        target.copy.delete()
        return
    copy = target.copy or _copy_for_seed(brand, target.seed)
    if not copy.removed:
        copy.removed = True
        copy.removed_at = timezone.now()
        copy.save(update_fields=["removed", "removed_at", "updated_at"])


@transaction.atomic
def competitor_restore(*, owner, brand_id: UUID, competitor_id: UUID) -> dict[str, Any]:
    brand = brand_of(owner, brand_id, lock=True)
    target = resolve_competitor(brand, competitor_id)
    if target.is_kit_name:
        raise NameOnly()
    copy = target.copy
    if copy is None or not copy.removed:
        raise InvalidState("Only a removed competitor can be restored.")
    copy.removed = False
    copy.removed_at = None
    copy.save(update_fields=["removed", "removed_at", "updated_at"])
    return competitor_row(brand, seed=target.seed, copy=copy)


# --- Discovery (the competitors audit) ---------------------------------------------------------------


def _adopt_kit_names(brand: Brand) -> list[str]:
    """Kit names that no discovered row covers yet are looked up in the whole seed layer visible to
    the owner (seeds found for other domains); a hit is adopted as a full-data row, `added` but not
    `added_manually` (docs/decisions.md#competitor-rows, rule 2). A seed the brand removed is not adopted again."""
    present = active_discovered_names(brand)
    keys = {}
    for kit in brand.kits.all():
        for name in kit.competitor_names:
            key = normalize_name(name)
            if present.match(key) is None:
                keys.setdefault(key, name)
    if not keys:
        return []
    known = set(BrandCompetitor.objects.filter(brand=brand, seed__isnull=False).values_list("seed_id", flat=True))
    candidates = (
        CompetitorSeed.objects.filter(name_key__in=keys)
        .filter(Q(owner__isnull=True) | Q(owner_id=brand.owner_id))
        .exclude(id__in=known)
        .order_by("name_key", "origin", "created_at")  # the owner's private seed first, then the oldest
    )
    if brand.domain:
        candidates = candidates.exclude(target_domain=brand.domain)
    adopted, seen = [], set()
    for seed in candidates:
        if seed.name_key in seen:
            continue
        seen.add(seed.name_key)
        _copy_for_seed(brand, seed, added=True)
        adopted.append(seed.name)
    return adopted


def _resolve_identities(brand: Brand) -> int:
    """Give every seed and manual row with a domain its advertiser. Returns how many were resolved."""
    now = timezone.now()
    seed_ids = set(brand_seeds(brand).values_list("id", flat=True)) | set(
        BrandCompetitor.objects.filter(brand=brand, seed__isnull=False).values_list("seed_id", flat=True)
    )
    seeds = list(CompetitorSeed.objects.filter(id__in=seed_ids, advertiser__isnull=True).exclude(canonical_domain=""))
    copies = [  # rows whose domain is their own: manual ones, and copies that edited it
        c
        for c in BrandCompetitor.objects.filter(brand=brand, advertiser__isnull=True).exclude(canonical_domain="")
        if c.seed_id is None or "canonical_domain" in c.edited_fields
    ]
    seed_names: dict[str, str] = {}  # seeds are system data: their names may name a new advertiser
    for seed in seeds:
        if domain := normalize_domain(seed.canonical_domain):
            seed_names.setdefault(domain, seed.name)
    domains = [normalize_domain(row.canonical_domain) for row in [*seeds, *copies]]
    advertisers = advertisers_for_domains([d for d in domains if d], system_names=seed_names)
    resolved = 0
    shared_competitors_changed()  # the updates below send no signals
    roster_changed(brand.id)
    for model, rows in ((CompetitorSeed, seeds), (BrandCompetitor, copies)):
        for row in rows:
            advertiser = advertisers.get(normalize_domain(row.canonical_domain))
            if advertiser is not None:
                resolved += model.objects.filter(id=row.id, advertiser__isnull=True).update(
                    advertiser=advertiser, advertiser_resolved_at=now
                )
    return resolved


def competitors_discover(*, brand: Brand) -> dict[str, Any]:
    """Adopt kit-named seeds, resolve advertiser identities, and refresh the brand's competitors
    tracked group. Returns a summary for the audit's artifact."""
    with transaction.atomic():
        Brand.objects.select_for_update().filter(id=brand.id).first()
        adopted = _adopt_kit_names(brand)
        resolved = _resolve_identities(brand)
    roster = competitor_roster(brand)
    discovered = [r for r in roster if r["source"] == CompetitorSource.SEO_DISCOVERY]
    names: dict[str, str] = {}  # advertiser id -> the name the brand's roster shows (first row wins)
    for r in discovered:
        if r["advertiser_id"]:
            names.setdefault(r["advertiser_id"], r["name"])
    by_id = {str(a.id): a for a in Advertiser.objects.filter(id__in=names)}
    group = competitors_group_sync(brand=brand, advertisers=[(by_id[i], n) for i, n in names.items() if i in by_id])
    origins = [r["origin"] for r in discovered]
    return {
        "roster_size": len(roster),
        # Only rows a provider found in data count as discovered (docs/decisions.md#competitor-discovery).
        "discovered": sum(1 for o in origins if o in DISCOVERED_ORIGINS),
        "manual": origins.count(CompetitorOrigin.MANUAL),
        "seeded": sum(1 for o in origins if o in (CompetitorOrigin.DEMO, CompetitorOrigin.ADMIN)),
        "brand_kit_names": len(roster) - len(discovered),
        "starred": sum(1 for r in roster if r["is_starred"]),
        "adopted": adopted,
        "identities_resolved": resolved,
        "tracked_group_id": str(group.id),
        "competitors": [
            {
                "id": str(r["id"]),
                "name": r["name"],
                "source": r["source"],
                "origin": r["origin"],
                "domain": r["canonical_domain"],
            }
            for r in roster[:100]
        ],
    }
