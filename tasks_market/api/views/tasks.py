from __future__ import annotations

from drf_spectacular.utils import OpenApiExample, extend_schema
from rest_framework.response import Response

from core.api.filters import parameters
from core.api.pagination import (
    Page,
    PageQuery,
    decode_cursor,
    envelope,
)
from core.api.renderers import Rendered
from core.api.schema import error_response
from core.api.views import ApiView
from core.http.access import Access
from core.http.errors import NotFound
from core.http.idempotency import idempotent
from tasks_market import selectors
from tasks_market.api.serializers import (
    TaskInput,
    TaskRemixInput,
    TaskSerializer,
    task_item,
)
from tasks_market.api.views.common import PROVIDER_ERRORS, body_rules
from tasks_market.filters import TaskFilter, search_of
from tasks_market.models import Task
from tasks_market.selectors.task_list import ORDER, task_list_read
from tasks_market.selectors.task_search import SEARCH_TOTAL_CAP, task_search_read
from tasks_market.services import posting as services

TAGS = ["tasks"]


def _page_body(page: Page, viewer_id, exact: bool = True) -> dict:
    return {
        "items": [task_item(row, viewer_id) for row in page.rows],
        "total": page.total,
        "has_more": page.has_more,
        "next_cursor": page.next_cursor,
        "total_exact": exact,
    }


class TaskListView(ApiView):
    access = Access.USER_OR_KEY

    @extend_schema(
        operation_id="tasks_list",
        summary="List your tasks, or the open ones",
        description=(
            "`scope=mine` (the default): the tasks you posted; `scope=open`: every open task, to bid on. Optionally "
            "filtered by `status` and searched: by `category`, `currency`, budget and deadline bounds (inclusive) "
            "and full text (`q`), in the order `sort` names (newest first by default). Agents and posters get the "
            "same results for the same query. `total` is exact but for a text search, which counts up to "
            f"{SEARCH_TOTAL_CAP} matches and reaches that many (`total_exact` says whether it is exact)."
        ),
        tags=TAGS,
        parameters=[PageQuery, parameters(TaskFilter)],
        responses=envelope(TaskSerializer),
    )
    def get(self, request):
        params = self.query(PageQuery, TaskFilter)
        search = search_of(params)
        if search:
            read = task_search_read(
                request.user,
                scope=params["scope"],
                status=params.get("status"),
                search=search,
                cursor=params.get("cursor"),
                limit=params["limit"],
                offset=params["offset"],
            )
        else:
            read = task_list_read(
                request.user,
                scope=params["scope"],
                status=params.get("status"),
                after=decode_cursor(params.get("cursor"), ORDER, Task, offset=params["offset"]),
                limit=params["limit"],
                offset=params["offset"],
            )
        viewer_id = request.user.pk if request.user else None
        if read.kept is None:
            return Response(_page_body(read.page, viewer_id, read.exact))
        # The open list, the same for every caller but `is_mine`: its kept page's bodies are rendered once
        # per pattern of the caller's own rows on the page (tasks_market.selectors.task_list).
        mine = tuple(viewer_id is not None and row["poster_id"] == viewer_id for row in read.page.rows)
        return Response(Rendered(read.kept, mine, lambda: _page_body(read.page, viewer_id, read.exact)))

    @extend_schema(
        operation_id="tasks_create",
        summary="Post a task",
        description="The task is open for bids at once. Rate limited on its own: 60 per minute.",
        tags=TAGS,
        request=TaskInput,
        responses={201: TaskSerializer},
        examples=[
            OpenApiExample(
                "Copy for a landing page",
                request_only=True,
                value={
                    "title": "Landing page copy",
                    "description": "Three variants, 80 words each.",
                    "budget_amount": "40.00",
                    "budget_currency": "usd",
                    "deadline": "2099-12-31T23:59:59Z",
                    "category": "content",
                    "requirements": ["plain English"],
                },
            )
        ],
    )
    @idempotent(atomic=True)  # one insert in this database: the task and its stored answer commit together
    def post(self, request):
        data = self.body(TaskInput)
        task = services.task_create(poster=request.user, **data)
        return self.created(TaskSerializer(task, context={"request": request}).data, "task-detail", task_id=task.id)


class TaskDetailView(ApiView):
    access = Access.USER_OR_KEY

    @extend_schema(
        operation_id="tasks_get",
        summary="A task",
        description=(
            "Open tasks are visible to every user; the others to their poster and to the owner of the agent "
            "whose bid is selected."
        ),
        tags=TAGS,
        responses=TaskSerializer,
    )
    def get(self, request, task_id):
        task = selectors.task_for(request.user, task_id)
        if task is None:
            raise NotFound()
        return Response(TaskSerializer(task, context={"request": request}).data)


class TaskCancelView(ApiView):
    access = Access.USER_OR_KEY

    @extend_schema(
        operation_id="tasks_cancel",
        summary="Cancel a task",
        description=(
            "The poster cancels an `open` task or one `awaiting_payment` (its payment is cancelled at the "
            "provider); live bids become `rejected`. A paid task still `delivering` can be cancelled once its "
            "delivery is overdue (the task's deadline, or the bid's `eta_hours` after payment if later): the "
            "payment is refunded in full (docs/decisions.md#cancelling-a-paid-task)."
        ),
        tags=TAGS,
        request=None,
        responses={
            200: TaskSerializer,
            409: error_response("The task is past payment, or paid and not overdue yet (`invalid_state`)."),
            **PROVIDER_ERRORS,
        },
    )
    @idempotent
    def post(self, request, task_id):
        task = services.task_cancel(task_id=task_id, poster=request.user)
        return Response(TaskSerializer(task, context={"request": request}).data)


class TaskRemixView(ApiView):
    access = Access.USER_OR_KEY

    @extend_schema(
        operation_id="tasks_remix",
        summary="Remix a task",
        description=(
            "A new open task copied from one of your tasks or from any open task, with `remixed_from` set. "
            "Fields given in the body replace the copied ones; a new `deadline` is needed when the copied "
            "one has passed."
        ),
        tags=TAGS,
        request=TaskRemixInput,
        responses={201: TaskSerializer},
    )
    @idempotent
    def post(self, request, task_id):
        data = self.body(TaskRemixInput)
        with body_rules(request):
            task = services.task_remix(user=request.user, task_id=task_id, overrides=data)
        return self.created(TaskSerializer(task, context={"request": request}).data, "task-detail", task_id=task.id)
