"""Writes for brand intelligence: advertisers and tracked groups (docs/decisions.md#domain-rules).

A group's shared membership (member rows with module "") is what every module in
`shared_modules` sees. Removing a module from `shared_modules` forks it: today's shared members
are copied into rows of that module, which it keeps seeing; later additions go to the shared
membership only, so they do not reach it. Putting the module back into `shared_modules` ends the
fork: the module sees the shared membership again and its forked rows are dropped.
"""

from __future__ import annotations

from collections.abc import Iterable
from datetime import datetime
from uuid import UUID

from django.db import transaction
from django.utils import timezone

from brands.models import Advertiser, Brand, TrackedGroup, TrackedGroupFork, TrackedGroupMember
from brands.models.intelligence import SHARED
from brands.selectors.brands import brand_of
from brands.selectors.roster_cache import roster_changed
from core.http.errors import NotFound, StaleWrite

COMPETITORS_GROUP_SLUG = "competitors"


def advertisers_for_domains(
    domains: Iterable[str], *, system_names: dict[str, str] | None = None
) -> dict[str, Advertiser]:
    """Advertisers for normalised domains, found or created in three queries at most.

    A created advertiser is named from `system_names` (names the system vouches for, e.g. a
    competitor seed's) or after its domain: a name a user typed never reaches the shared row, where
    every other user would see it. An existing advertiser keeps its name."""
    domains = list(dict.fromkeys(domains))
    if not domains:
        return {}
    system_names = system_names or {}
    existing = {a.domain: a for a in Advertiser.objects.filter(domain__in=domains)}
    missing = [Advertiser(domain=d, name=system_names.get(d) or d) for d in domains if d not in existing]
    if missing:
        Advertiser.objects.bulk_create(missing, ignore_conflicts=True)  # a concurrent creation wins
        existing = {a.domain: a for a in Advertiser.objects.filter(domain__in=domains)}
    return existing


def _advertisers(advertiser_ids: Iterable[UUID], advertisers: Iterable[dict]) -> list[tuple[Advertiser, str]]:
    """(advertiser, display name) pairs: existing advertisers by id (the input serializer has
    checked they exist; no display name of their own), then advertisers found or created by domain
    with the name the caller typed, which stays the caller's."""
    ids = list(dict.fromkeys(advertiser_ids))
    found = {a.id: a for a in Advertiser.objects.filter(id__in=ids)}
    result = [(found[i], "") for i in ids if i in found]
    wanted: dict[str, str] = {}
    for item in advertisers:
        wanted.setdefault(item["domain"], (item.get("name") or "").strip())
    by_domain = advertisers_for_domains(wanted)
    result += [(by_domain[d], name) for d, name in wanted.items() if d in by_domain]
    unique: dict[UUID, tuple[Advertiser, str]] = {}
    for advertiser, name in result:
        if advertiser.id not in unique or name:
            unique[advertiser.id] = (advertiser, name)
    return list(unique.values())


def _add_shared(group: TrackedGroup, members: list[tuple[Advertiser, str]]) -> None:
    """Adds to the shared membership; a member already there takes the newly given display name
    (this group's owner is the only one who sees it)."""
    present = {
        m.advertiser_id: m for m in group.memberships.filter(module=SHARED).only("id", "advertiser_id", "display_name")
    }
    roster_changed(group.brand_id)  # bulk writes send no signals
    TrackedGroupMember.objects.bulk_create(
        [
            TrackedGroupMember(group=group, advertiser=a, module=SHARED, display_name=name)
            for a, name in members
            if a.id not in present
        ],
        ignore_conflicts=True,
    )
    renamed = []
    for a, name in members:
        member = present.get(a.id)
        if member is not None and name and member.display_name != name:
            member.display_name = name
            renamed.append(member)
    if renamed:
        TrackedGroupMember.objects.bulk_update(renamed, ["display_name"])


def _locked_group(*, owner, brand_id: UUID, group_id: UUID) -> TrackedGroup:
    brand = brand_of(owner, brand_id)
    group = TrackedGroup.objects.select_for_update().filter(brand=brand, id=group_id).first()
    if group is None:
        raise NotFound("No such tracked group.")
    return group


@transaction.atomic
def tracked_group_create(
    *,
    owner,
    brand_id: UUID,
    name: str,
    shared_modules: list[str],
    advertiser_ids: Iterable[UUID] = (),
    advertisers: Iterable[dict] = (),
) -> TrackedGroup:
    brand = brand_of(owner, brand_id)
    members = _advertisers(advertiser_ids, advertisers)
    group = TrackedGroup.objects.create(brand=brand, name=name, shared_modules=list(dict.fromkeys(shared_modules)))
    _add_shared(group, members)
    return group


@transaction.atomic
def tracked_group_update(
    *,
    owner,
    brand_id: UUID,
    group_id: UUID,
    name: str | None = None,
    shared_modules: list[str] | None = None,
    expected_updated_at: datetime | None = None,
) -> TrackedGroup:
    group = _locked_group(owner=owner, brand_id=brand_id, group_id=group_id)
    if expected_updated_at is not None and expected_updated_at != group.updated_at:
        raise StaleWrite()
    if name is not None:
        group.name = name
    if shared_modules is not None:
        new = list(dict.fromkeys(shared_modules))
        for module in (m for m in group.shared_modules if m not in new):
            _fork(group, module)
        rejoined = [m for m in new if m not in group.shared_modules]
        if rejoined:
            TrackedGroupFork.objects.filter(group=group, module__in=rejoined).delete()
            TrackedGroupMember.objects.filter(group=group, module__in=rejoined).delete()
        group.shared_modules = new
    group.save()  # bumps updated_at even when nothing else changed: the write happened
    return group


def _fork(group: TrackedGroup, module: str) -> None:
    _, created = TrackedGroupFork.objects.get_or_create(group=group, module=module)
    if not created:
        return
    shared = group.memberships.filter(module=SHARED).values_list("advertiser_id", "display_name")
    roster_changed(group.brand_id)
    TrackedGroupMember.objects.bulk_create(
        [TrackedGroupMember(group=group, advertiser_id=a, module=module, display_name=n) for a, n in shared],
        ignore_conflicts=True,
    )


@transaction.atomic
def tracked_group_add_members(
    *, owner, brand_id: UUID, group_id: UUID, advertiser_ids: Iterable[UUID] = (), advertisers: Iterable[dict] = ()
) -> TrackedGroup:
    """Adds to the shared membership; forked modules do not see the newcomers."""
    group = _locked_group(owner=owner, brand_id=brand_id, group_id=group_id)
    _add_shared(group, _advertisers(advertiser_ids, advertisers))
    group.save(update_fields=["updated_at"])
    return group


def competitors_group_sync(*, brand: Brand, advertisers: list[tuple[Advertiser, str]]) -> TrackedGroup:
    """The system group of a brand's competitors: shared membership = the roster's advertisers,
    each shown under the name the brand's roster gives it."""
    group, _ = TrackedGroup.objects.get_or_create(
        brand=brand,
        system_slug=COMPETITORS_GROUP_SLUG,
        defaults={"name": "Competitors", "shared_modules": ["competitors", "paid_media", "organic_social", "seo"]},
    )
    wanted = {a.id for a, _ in advertisers}
    roster_changed(brand.id)
    group.memberships.filter(module=SHARED).exclude(advertiser_id__in=wanted).delete()
    _add_shared(group, advertisers)
    TrackedGroup.objects.filter(id=group.id).update(updated_at=timezone.now())
    return group
