from __future__ import annotations

from drf_spectacular.utils import extend_schema
from rest_framework import status
from rest_framework.response import Response

from core.api.pagination import PageQuery, envelope, keyset_page, render_page
from core.api.schema import error_response
from core.api.views import ApiView
from core.http.access import Access
from core.http.errors import NotFound
from core.http.idempotency import idempotent
from tasks_market import selectors
from tasks_market.api.serializers import (
    AgentCreateInput,
    AgentEndpointInput,
    AgentSerializer,
    AgentWithSecretSerializer,
    BenchmarkRunSerializer,
    SavedSearchInput,
    SavedSearchSerializer,
)
from tasks_market.models.searches import MAX_SEARCHES_PER_AGENT
from tasks_market.services import agents as services
from tasks_market.services import saved_searches as search_services

TAGS = ["agents"]


def _agent(request, agent_id):
    agent = selectors.agent_of(request.user, agent_id)
    if agent is None:
        raise NotFound()
    return agent


class AgentListView(ApiView):
    access = Access.USER_OR_KEY

    @extend_schema(
        operation_id="agents_list",
        summary="List your agents",
        description=(
            "The agents you registered, newest first, each with its endpoint and categories (never the signing secret)."
        ),
        tags=TAGS,
        parameters=[PageQuery],
        responses=envelope(AgentSerializer),
    )
    def get(self, request):
        params = self.query(PageQuery)
        rows, total, has_more, next_cursor = keyset_page(
            selectors.agents_of(request.user), **params, total=selectors.agents_total(request.user)
        )
        return Response(render_page(AgentSerializer, rows, total, has_more, next_cursor=next_cursor))

    @extend_schema(
        operation_id="agents_register",
        summary="Register an agent",
        description=(
            "Returns the agent with its `signing_secret`, shown only here. Every task the agent wins is "
            'POSTed to `endpoint_url` as `{type: "task.dispatched", timestamp, data}`, signed per Standard '
            "Webhooks (`webhook-id`, `webhook-timestamp`, `webhook-signature`) with that secret."
        ),
        tags=TAGS,
        request=AgentCreateInput,
        responses={201: AgentWithSecretSerializer},
    )
    @idempotent
    def post(self, request):
        data = self.body(AgentCreateInput)
        agent = services.agent_register(owner=request.user, **data)
        return self.created(AgentWithSecretSerializer(agent).data, "agent-detail", agent_id=agent.id)


class AgentDetailView(ApiView):
    access = Access.USER_OR_KEY

    @extend_schema(
        operation_id="agents_get",
        summary="An agent",
        description="One of your agents by id; another user's agent is 404.",
        tags=TAGS,
        responses=AgentSerializer,
    )
    def get(self, request, agent_id):
        return Response(AgentSerializer(_agent(request, agent_id)).data)


class AgentEndpointView(ApiView):
    access = Access.USER_OR_KEY

    @extend_schema(
        operation_id="agents_update_endpoint",
        summary="Change an agent's endpoint URL",
        description="The new `endpoint_url` (https, on a public address) receives the agent's won tasks from now on.",
        tags=TAGS,
        request=AgentEndpointInput,
        responses=AgentSerializer,
    )
    def patch(self, request, agent_id):
        data = self.body(AgentEndpointInput)
        agent = services.agent_update_endpoint(owner=request.user, agent_id=agent_id, **data)
        return Response(AgentSerializer(agent).data)


class AgentRotateSecretView(ApiView):
    access = Access.USER_OR_KEY

    @extend_schema(
        operation_id="agents_rotate_secret",
        summary="Rotate an agent's signing secret",
        description=(
            "Returns the agent with its new `signing_secret`, shown only here. For 24 hours the previous "
            "secret signs every dispatch beside the new one (two `v1,` signatures), so the agent can switch "
            "without missing a task."
        ),
        tags=TAGS,
        request=None,
        responses=AgentWithSecretSerializer,
    )
    @idempotent
    def post(self, request, agent_id):
        agent = services.agent_rotate_secret(owner=request.user, agent_id=agent_id)
        return Response(AgentWithSecretSerializer(agent).data)


class AgentBenchmarkView(ApiView):
    access = Access.USER_OR_KEY

    @extend_schema(
        operation_id="agents_benchmark",
        summary="Benchmark an agent",
        description=(
            "Queues a run of the fixed benchmark cases (`acknowledge`, `summarise`, `classify`), each POSTed "
            'to the agent\'s endpoint as `{type: "agent.benchmark", timestamp, data: {run_id, agent_id, case, '
            "task}}`, signed like a dispatch. A case passes on a 2xx answer within 10 s. Score = 100 * (0.7 * "
            "passed share + 0.3 * latency credit), latency credit being 1 up to 500 ms and 0 from 10 s. "
            "Follow the run at `GET /api/v1/agents/{agent_id}/benchmarks`."
        ),
        tags=TAGS,
        request=None,
        responses={202: BenchmarkRunSerializer, 409: error_response("A benchmark of this agent is already running.")},
    )
    @idempotent
    def post(self, request, agent_id):
        run = services.benchmark_start(owner=request.user, agent_id=agent_id)
        return Response(BenchmarkRunSerializer(run).data, status=status.HTTP_202_ACCEPTED)


class AgentBenchmarksView(ApiView):
    access = Access.USER_OR_KEY

    @extend_schema(
        operation_id="agents_benchmarks_list",
        summary="An agent's benchmark runs, newest first",
        description="Every benchmark run of the agent (queued with `POST .../benchmark`), with its per-case results.",
        tags=TAGS,
        parameters=[PageQuery],
        responses=envelope(BenchmarkRunSerializer),
    )
    def get(self, request, agent_id):
        params = self.query(PageQuery)
        rows, total, has_more, next_cursor = keyset_page(selectors.benchmarks_of(_agent(request, agent_id)), **params)
        return Response(render_page(BenchmarkRunSerializer, rows, total, has_more, next_cursor=next_cursor))


class AgentSearchesView(ApiView):
    access = Access.USER_OR_KEY

    @extend_schema(
        operation_id="agents_searches_list",
        summary="An agent's saved searches, newest first",
        description="The searches whose new matching tasks are announced to the agent (`POST .../searches`).",
        tags=TAGS,
        parameters=[PageQuery],
        responses=envelope(SavedSearchSerializer),
    )
    def get(self, request, agent_id):
        params = self.query(PageQuery)
        rows, total, has_more, next_cursor = keyset_page(
            selectors.saved_searches_of(_agent(request, agent_id)), **params
        )
        return Response(render_page(SavedSearchSerializer, rows, total, has_more, next_cursor=next_cursor))

    @extend_schema(
        operation_id="agents_searches_create",
        summary="Save a search for an agent",
        description=(
            "The task list's search parameters, by the same names (`category` a list; no `sort`). Every task that "
            "becomes open from now on (posted, remixed, or open again) and that the search selects is POSTed to the "
            'agent\'s endpoint once per task and agent: `{type: "task.matched", timestamp, data: {search_id, task}}`, '
            "`task` as the list shows it, signed like a dispatch; the poster's own agents are not told. At most "
            f"{MAX_SEARCHES_PER_AGENT} per agent (409 past it)."
        ),
        tags=TAGS,
        request=SavedSearchInput,
        responses={201: SavedSearchSerializer, 409: error_response("The agent has the most saved searches it may.")},
    )
    @idempotent
    def post(self, request, agent_id):
        data = self.body(SavedSearchInput)
        search = search_services.saved_search_create(owner=request.user, agent_id=agent_id, **data)
        return self.created(SavedSearchSerializer(search).data, "agent-search", agent_id=agent_id, search_id=search.id)


class AgentSearchView(ApiView):
    access = Access.USER_OR_KEY

    @extend_schema(
        operation_id="agents_searches_get",
        summary="A saved search",
        description="One of your agent's saved searches by id; another user's is 404.",
        tags=TAGS,
        responses=SavedSearchSerializer,
    )
    def get(self, request, agent_id, search_id):
        search = selectors.saved_searches_of(_agent(request, agent_id)).filter(pk=search_id).first()
        if search is None:
            raise NotFound()
        return Response(SavedSearchSerializer(search).data)

    @extend_schema(
        operation_id="agents_searches_delete",
        summary="Delete a saved search",
        description="Its announcements already made still go out; no new ones.",
        tags=TAGS,
        responses={204: None},
    )
    def delete(self, request, agent_id, search_id):
        search_services.saved_search_delete(owner=request.user, agent_id=agent_id, search_id=search_id)
        return Response(status=status.HTTP_204_NO_CONTENT)
