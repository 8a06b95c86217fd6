from __future__ import annotations

from django.db.models import QuerySet

from teams.models import Team


def teams_of(owner, *, status: str | None = None) -> QuerySet[Team]:
    queryset = Team.objects.filter(owner=owner)
    if status:
        queryset = queryset.filter(status=status)
    return queryset.order_by("-created_at", "-id")


def team_of(owner, team_id) -> Team | None:
    return Team.objects.filter(owner=owner, id=team_id).first()
