"""Competitor discovery runs (docs/decisions.md#competitor-discovery).

A run asks the SEO provider (brands.providers.seo) which domains compete with the brand's domain, then, under
a lock on that domain, makes the public seed layer of the domain agree with the answer for the rows that
provider found before (`discovered_by` = its origin): a new candidate becomes a public seed, a seed the answer
no longer names is deleted unless some brand has a copy of it (starred, edited, removed or adopted: a person's
decision outlives the provider's), a known one gets its metrics refreshed. A candidate that duplicates a row the
brand already has (same registrable domain, or the same company by name: brands.domain.matching.same_company),
or an earlier candidate, is skipped. Rows of other origins (manual, demo, admin, the other provider) are never
touched. The provider is called before the lock is taken, never under it.

When seeds were added or deleted the run emits `competitors.changed` (brand id, added, removed) in the same
transaction. The answer is stored by registrable domain, so the same answer twice (a retried read) adds
nothing and emits nothing the second time.
"""

from __future__ import annotations

import logging
from typing import Any
from uuid import UUID

from django.db import connection, transaction
from django.db.models import Q
from django.utils import timezone

from brands.domain.matching import NameIndex, identity_keys, normalize_name, registrable_domain
from brands.models import Brand, BrandCompetitor, CompetitorSeed
from brands.providers.seo import Candidate, SEOProvider, get_seo_provider
from brands.selectors.competitors import brand_seeds
from brands.selectors.roster_cache import roster_changed, shared_competitors_changed
from webhooks_app.services import event_publish

logger = logging.getLogger(__name__)

EVENT = "competitors.changed"


def _lock_target(target: str) -> None:
    """Runs for the same domain (two brands share a seed layer) take turns."""
    if connection.vendor == "postgresql":
        with connection.cursor() as cursor:
            cursor.execute("SELECT pg_advisory_xact_lock(hashtext(%s))", [f"competitor-discovery:{target}"])


class _Known:
    """The companies the brand's roster already has, by registrable domain and by name."""

    def __init__(self) -> None:
        self.domains: set[str] = set()
        self.keys: set[str] = set()
        self.names = NameIndex()

    def add(self, name: str, domain: str) -> None:
        if domain:
            self.domains.add(domain)
        if name:
            self.keys |= identity_keys(name)
            self.names.add(normalize_name(name))

    def has(self, candidate: Candidate) -> bool:
        return (
            candidate.domain in self.domains
            or bool(identity_keys(candidate.name) & self.keys)
            or self.names.match(normalize_name(candidate.name)) is not None
        )


def discovery_target(brand: Brand) -> str:
    return registrable_domain(brand.domain) or registrable_domain(brand.website_url) or brand.domain


def competitors_discovery_run(*, brand_id: UUID | str, provider: SEOProvider | None = None) -> dict[str, Any]:
    """One discovery run for the brand. Raises ProviderError (refused: retrying will not help) or
    ProviderUnavailable (transient) from the provider, before anything is written."""
    brand = Brand.objects.filter(id=brand_id).first()
    if brand is None:
        return {"status": "skipped", "reason": "The brand no longer exists."}
    target = discovery_target(brand)
    if not target or not brand.domain:
        return {"status": "skipped", "reason": "The brand has no domain to discover competitors of."}
    provider = provider or get_seo_provider()
    answer = provider.competitors(target_domain=target, website_url=brand.website_url)
    now = timezone.now()
    with transaction.atomic():
        Brand.objects.select_for_update().filter(id=brand.id).first()
        _lock_target(brand.domain)
        layer = CompetitorSeed.objects.filter(target_domain=brand.domain, owner__isnull=True)
        mine = {}
        for seed in layer.filter(discovered_by=answer.origin).order_by("created_at", "id"):
            mine.setdefault(registrable_domain(seed.canonical_domain), seed)
        known = _Known()
        for seed in brand_seeds(brand).exclude(discovered_by=answer.origin):
            known.add(seed.name, registrable_domain(seed.canonical_domain))
        for copy in BrandCompetitor.objects.filter(brand=brand).filter(Q(seed__isnull=True) | Q(added=True)):
            known.add(copy.name, registrable_domain(copy.canonical_domain))
        own = registrable_domain(brand.domain) or brand.domain
        kept: set[UUID] = set()
        added, skipped, refreshed = [], [], 0
        for candidate in answer.candidates:
            seed = mine.get(candidate.domain)
            if seed is not None and seed.id not in kept:
                kept.add(seed.id)
                known.add(seed.name, candidate.domain)
                if (seed.analysis_data or {}).get("seo") != candidate.metrics:
                    seed.analysis_data = {**(seed.analysis_data or {}), "seo": candidate.metrics}
                    seed.save(update_fields=["analysis_data", "updated_at"])
                    refreshed += 1
                continue
            if candidate.domain == own or known.has(candidate):
                skipped.append(candidate.domain)
                continue
            known.add(candidate.name, candidate.domain)
            seed = CompetitorSeed.objects.create(
                name=candidate.name,
                target_domain=brand.domain,
                canonical_domain=candidate.domain,
                website_url=f"https://{candidate.domain}/",
                discovered_by=answer.origin,
                analysis_data={"seo": candidate.metrics, "discovered_at": now.isoformat(), "provider": answer.provider},
            )
            kept.add(seed.id)
            added.append(candidate.domain)
        gone = [s for s in layer.filter(discovered_by=answer.origin) if s.id not in kept]
        held = set(BrandCompetitor.objects.filter(seed__in=gone).values_list("seed_id", flat=True))
        removed = [s.canonical_domain for s in gone if s.id not in held]
        CompetitorSeed.objects.filter(id__in=[s.id for s in gone if s.id not in held]).delete()
        if added or removed or refreshed:
            shared_competitors_changed()
            roster_changed(brand.id)
        if added or removed:
            event_publish(
                owner=brand.owner,
                event_type=EVENT,
                data={
                    "brand_id": str(brand.id),
                    "provider": answer.provider,
                    "added": len(added),
                    "removed": len(removed),
                },
            )
    return {
        "status": "completed",
        "provider": answer.provider,
        "origin": answer.origin,
        "target": answer.target,
        "source_url": answer.source_url,
        "candidates": len(answer.candidates),
        "added": added,
        "removed": removed,
        "kept_for_owners": len(held),
        "skipped_duplicates": skipped,
        "refreshed": refreshed,
    }
