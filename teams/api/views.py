from __future__ import annotations

from drf_spectacular.utils import extend_schema
from rest_framework.response import Response

from core.api.filters import filtered, parameters
from core.api.pagination import PageQuery, envelope, keyset_page, render_page
from core.api.schema import error_response
from core.api.views import ApiView
from core.http.access import Access
from core.http.errors import NotFound
from core.http.idempotency import idempotent
from teams import selectors, services
from teams.api.serializers import TeamHireInput, TeamSerializer, TeamUpdateInput
from teams.filters import TeamFilter

TAGS = ["teams"]
PROVIDER_ERRORS = {
    502: error_response("The payment provider refused the change; nothing was changed."),
    503: error_response("The payment provider is unavailable; nothing was changed."),
}


class TeamListView(ApiView):
    access = Access.USER

    @extend_schema(
        operation_id="teams_list",
        summary="List your teams",
        description="Your teams, newest first, optionally filtered by `status`.",
        tags=TAGS,
        parameters=[parameters(TeamFilter), PageQuery],
        responses=envelope(TeamSerializer),
    )
    def get(self, request):
        params = self.query(TeamFilter, PageQuery)
        rows, total, has_more, next_cursor = keyset_page(
            filtered(TeamFilter, selectors.teams_of(request.user), params),
            limit=params["limit"],
            offset=params["offset"],
            cursor=params.get("cursor"),
        )
        return Response(render_page(TeamSerializer, rows, total, has_more, next_cursor=next_cursor))

    @extend_schema(
        operation_id="teams_hire",
        summary="Hire a team",
        description="Creates the team's subscription at the payment provider, then the team.",
        tags=TAGS,
        request=TeamHireInput,
        responses={201: TeamSerializer, **PROVIDER_ERRORS},
    )
    @idempotent
    def post(self, request):
        data = self.body(TeamHireInput)
        team = services.team_hire(owner=request.user, **data)
        return self.created(TeamSerializer(team).data, "team-detail", team_id=team.id)


class TeamDetailView(ApiView):
    access = Access.USER

    @extend_schema(
        operation_id="teams_get",
        summary="A team",
        description="One of your teams by id: its settings, subscription status and billing period.",
        tags=TAGS,
        responses=TeamSerializer,
    )
    def get(self, request, team_id):
        team = selectors.team_of(request.user, team_id)
        if team is None:
            raise NotFound()
        return Response(TeamSerializer(team).data)

    @extend_schema(
        operation_id="teams_update",
        summary="Change a team's settings, or pause / resume it",
        description=(
            "Changes the settings sent; `status` `paused` pauses an active team's work and `active` resumes it. "
            "Pausing stops the subscription's billing at the payment provider and resuming starts it again: the "
            "provider is told first, and if it fails (502 / 503) nothing of the request is changed."
        ),
        tags=TAGS,
        request=TeamUpdateInput,
        responses={
            200: TeamSerializer,
            409: error_response("The status change is not allowed from this state, or one is under way."),
            **PROVIDER_ERRORS,
        },
    )
    def patch(self, request, team_id):
        data = self.body(TeamUpdateInput)
        team = services.team_update(team_id=team_id, owner=request.user, **data)
        return Response(TeamSerializer(team).data)


class TeamUnsubscribeView(ApiView):
    access = Access.USER

    @extend_schema(
        operation_id="teams_unsubscribe",
        summary="Unsubscribe (cancel at the end of the billing period)",
        description=(
            "The subscription is cancelled at the end of the billing period; the team works until then (status "
            "`cancelling`)."
        ),
        tags=TAGS,
        request=None,
        responses={
            200: TeamSerializer,
            409: error_response("Only an active team can be unsubscribed."),
            **PROVIDER_ERRORS,
        },
    )
    @idempotent
    def post(self, request, team_id):
        team = services.team_unsubscribe(team_id=team_id, owner=request.user)
        return Response(TeamSerializer(team).data)


class TeamReactivateView(ApiView):
    access = Access.USER

    @extend_schema(
        operation_id="teams_reactivate",
        summary="Reactivate (reverse an unsubscribe before the billing period ends)",
        description=(
            "Clears the pending unsubscribe at the payment provider; the team stays `active` and renews as before."
        ),
        tags=TAGS,
        request=None,
        responses={
            200: TeamSerializer,
            409: error_response("No unsubscribe is pending, or the billing period has ended."),
            **PROVIDER_ERRORS,
        },
    )
    @idempotent
    def post(self, request, team_id):
        team = services.team_reactivate(team_id=team_id, owner=request.user)
        return Response(TeamSerializer(team).data)
