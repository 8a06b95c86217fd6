"""Reads for brand intelligence: tracked groups as seen from a module, and artifacts."""

from __future__ import annotations

from dataclasses import dataclass
from uuid import UUID

from django.db.models import Prefetch, QuerySet

from brands.models import Artifact, Brand, TrackedGroup, TrackedGroupMember
from brands.models.intelligence import SHARED
from core.http.errors import NotFound


@dataclass(frozen=True)
class Member:
    """A member as its group's owner sees it: the shared advertiser's identity under the display
    name this membership gave it (the advertiser's own name when it gave none)."""

    id: UUID  # the advertiser's
    name: str
    domain: str
    industry: str
    avatar_url: str

    @classmethod
    def of(cls, membership: TrackedGroupMember) -> Member:
        a = membership.advertiser
        return cls(a.id, membership.display_name or a.name, a.domain, a.industry, a.avatar_url)


@dataclass(frozen=True)
class GroupView:
    """A tracked group as one module sees it (module None: the shared membership)."""

    group: TrackedGroup
    module: str | None
    forked: bool
    members: list[Member]

    def __getattr__(self, name):  # id, name, created_at, ... come from the group
        return getattr(self.group, name)

    @property
    def forked_modules(self) -> list[str]:
        return sorted(f.module for f in self.group.forks.all())

    @property
    def advertiser_ids(self) -> list[UUID]:
        return [a.id for a in self.members]


def _groups(brand: Brand) -> QuerySet[TrackedGroup]:
    members = TrackedGroupMember.objects.select_related("advertiser").order_by("added_at", "id")
    return (
        TrackedGroup.objects.filter(brand=brand)
        .prefetch_related(Prefetch("memberships", queryset=members), "forks")
        .order_by("-created_at", "-id")
    )


def group_view(group: TrackedGroup, module: str | None) -> GroupView:
    """Members as `module` sees them: its fork when it has one; the shared membership when the
    module is shared (or none is asked for); nobody when the group does not extend to it. `forked`: whether
    `module` has its own membership; without a module, whether any module has (a PATCH that forked one
    says so whichever view it asks for: docs/decisions.md#domain-rules)."""
    forks = {f.module for f in group.forks.all()}
    if module is None:
        scope, forked = SHARED, bool(forks)
    elif module in forks:
        scope, forked = module, True
    elif module in group.shared_modules:
        scope, forked = SHARED, False
    else:
        return GroupView(group, module, False, [])
    members = [Member.of(m) for m in group.memberships.all() if m.module == scope]
    return GroupView(group, module, forked, members)


def tracked_groups_of(brand: Brand) -> QuerySet[TrackedGroup]:
    return _groups(brand)


def tracked_group_of(brand: Brand, group_id: UUID) -> TrackedGroup:
    group = _groups(brand).filter(id=group_id).first()
    if group is None:
        raise NotFound("No such tracked group.")
    return group


def artifacts_of(brand: Brand, *, module: str | None = None) -> QuerySet[Artifact]:
    queryset = Artifact.objects.filter(brand=brand).order_by("-created_at", "-id")
    if module:
        queryset = queryset.filter(module=module)
    return queryset


def artifact_of(brand: Brand, artifact_id: UUID) -> Artifact:
    artifact = Artifact.objects.filter(brand=brand, id=artifact_id).first()
    if artifact is None:
        raise NotFound("No such artifact.")
    return artifact
