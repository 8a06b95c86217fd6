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
)
from tasks_market.services import agents as services

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
        rows, total, has_more, next_cursor = keyset_page(selectors.agents_of(request.user), **params)
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
