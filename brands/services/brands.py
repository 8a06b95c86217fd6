"""Writes for brands and brand kits, and linking a kit to a team (which starts the audits)."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any
from uuid import UUID

from django.conf import settings
from django.db import transaction
from django.utils import timezone

from brands.domain.matching import normalize_domain
from brands.models import Brand, BrandKit
from brands.selectors.brands import brand_of, kit_of
from brands.services.research import Dispatch, audit_modules, audits_queue
from core.http.errors import InputRejected, NotFound
from teams.models import Team, TeamStatus

BRAND_FIELDS = ("name", "website_url", "domain", "industry", "description", "country", "social_links")
KIT_FIELDS = (
    "name",
    "competitor_names",
    "voice",
    "tagline",
    "description",
    "colors",
    "fonts",
    "logo_url",
    "audiences",
    "keywords",
)


def _domain(website_url: str, domain: str | None) -> str:
    """An explicit domain wins; otherwise the website's host, without www."""
    if domain:
        return normalize_domain(domain)
    return normalize_domain(website_url) if website_url else ""


@transaction.atomic
def brand_create(*, owner, data: dict[str, Any]) -> Brand:
    fields = {k: v for k, v in data.items() if k in BRAND_FIELDS}
    fields["domain"] = _domain(fields.get("website_url", ""), fields.get("domain"))
    return Brand.objects.create(owner=owner, **fields)


@transaction.atomic
def brand_update(*, owner, brand_id: UUID, changes: dict[str, Any]) -> Brand:
    brand = brand_of(owner, brand_id, lock=True)
    website_changed = "website_url" in changes and changes["website_url"] != brand.website_url
    for field in BRAND_FIELDS:
        if field in changes:
            setattr(brand, field, changes[field])
    if "domain" in changes:
        brand.domain = _domain(brand.website_url, changes["domain"])
    elif website_changed:
        brand.domain = _domain(brand.website_url, None)
    brand.save()
    if "name" in changes:  # teams show the linked brand's name
        Team.objects.filter(owner=owner, brand_id=brand.id).update(brand_name=brand.name, updated_at=timezone.now())
    return brand


@transaction.atomic
def brand_delete(*, owner, brand_id: UUID) -> None:
    """Deletes the brand with its kits, competitors, groups, artifacts and publications; teams it
    was linked to forget it."""
    brand = brand_of(owner, brand_id, lock=True)
    Team.objects.filter(owner=owner, brand_id=brand.id).update(
        brand_id=None, brand_kit_id=None, brand_name="", updated_at=timezone.now()
    )
    brand.delete()


def _check_kit_names_cap(brand: Brand, *, names: list[str], kit: BrandKit | None = None) -> None:
    """The brand's kits together name at most BRAND_KIT_NAMES_PER_BRAND_MAX competitors. The caller
    holds the brand's row lock, so two writes cannot both pass on the same count."""
    others = BrandKit.objects.filter(brand=brand)
    if kit is not None:
        others = others.exclude(id=kit.id)
    used = sum(len(n) for n in others.values_list("competitor_names", flat=True))
    cap = settings.BRAND_KIT_NAMES_PER_BRAND_MAX
    if used + len(names) > cap:
        raise InputRejected(
            f"A brand's kits may name at most {cap} competitors together; this brand's other kits name {used}, "
            f"so this kit may name at most {max(cap - used, 0)} (got {len(names)}).",
            loc=["body", "competitor_names"],
        )


@transaction.atomic
def brand_kit_create(*, owner, brand_id: UUID, data: dict[str, Any]) -> BrandKit:
    brand = brand_of(owner, brand_id, lock=True)
    _check_kit_names_cap(brand, names=data.get("competitor_names") or [])
    return BrandKit.objects.create(owner=owner, brand=brand, **{k: v for k, v in data.items() if k in KIT_FIELDS})


@transaction.atomic
def brand_kit_update(*, owner, kit_id: UUID, changes: dict[str, Any]) -> BrandKit:
    if "competitor_names" in changes:  # the brand's lock first, as brand_delete takes them
        brand = brand_of(owner, kit_of(owner, kit_id).brand_id, lock=True)
        kit = kit_of(owner, kit_id, lock=True)
        _check_kit_names_cap(brand, names=changes["competitor_names"], kit=kit)
    else:
        kit = kit_of(owner, kit_id, lock=True)
    for field in KIT_FIELDS:
        if field in changes:
            setattr(kit, field, changes[field])
    kit.save()
    return kit


# A team in these states does no work, so linking it starts no audit (docs/decisions.md#domain-rules).
IDLE_TEAM_STATUSES = (TeamStatus.PAUSED, TeamStatus.CANCELLED)


@dataclass(frozen=True)
class LinkResult:
    kit: BrandKit
    team: Team
    audits: list[str]
    dispatch: Dispatch | None = None

    @property
    def audits_not_started(self) -> list[str]:
        """The audits that could not be sent. Read after the commit (the view does): before it, none was tried."""
        return list(self.dispatch.not_started) if self.dispatch is not None else []


@transaction.atomic
def brand_kit_link_team(*, owner, kit_id: UUID, team_id: UUID) -> LinkResult:
    """Link the kit to the team (one kit per team, one team per kit), then, once committed, start
    the default audits and the team's declared ones (`config.audits`). The audits are queued on
    commit; one that cannot start is logged and skipped and never fails this call. A team that is not
    working (paused or cancelled) is linked but starts no audit: `audits` is empty."""
    kit = kit_of(owner, kit_id, lock=True)
    team = Team.objects.select_for_update().filter(id=team_id, owner=owner).first()
    if team is None:
        raise NotFound("No such team.")
    now = timezone.now()
    if kit.team_id and kit.team_id != team.id:  # the kit's previous team forgets it
        Team.objects.filter(id=kit.team_id, brand_kit_id=kit.id).update(
            brand_kit_id=None, brand_id=None, brand_name="", updated_at=now
        )
    BrandKit.objects.filter(team=team).exclude(id=kit.id).update(team=None, linked_at=None)
    kit.team = team
    kit.linked_at = now
    kit.save(update_fields=["team", "linked_at", "updated_at"])
    Team.objects.filter(id=team.id).update(
        brand_kit_id=kit.id, brand_id=kit.brand_id, brand_name=kit.brand.name, updated_at=now
    )
    team.refresh_from_db()
    if team.status in IDLE_TEAM_STATUSES:
        return LinkResult(kit=kit, team=team, audits=[])
    config = team.config if isinstance(team.config, dict) else {}
    audits = audit_modules(brand=kit.brand, declared=config.get("audits"))
    dispatch = audits_queue(brand=kit.brand, modules=audits)
    return LinkResult(kit=kit, team=team, audits=audits, dispatch=dispatch)
