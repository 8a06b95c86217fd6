from __future__ import annotations

import uuid
from datetime import UTC, datetime
from functools import cache

from drf_spectacular.utils import OpenApiExample, extend_schema
from rest_framework.response import Response

from core import counters
from core.access import Access
from core.api.filters import parameters
from core.api.pagination import (
    Page,
    PageQuery,
    count_rows,
    counted,
    decode_cursor,
    envelope,
    keyset_after,
    keyset_page_compiled,
    page_compiled,
    page_cursor,
)
from core.api.renderers import Rendered
from core.api.schema import error_response
from core.api.views import ApiView
from core.errors import NotFound
from core.idempotency import idempotent
from core.pagecache import StampedPages
from core.precompiled import PrecompiledQuery
from tasks_market import selectors
from tasks_market.api.serializers import (
    TASK_COLUMNS,
    TaskInput,
    TaskRemixInput,
    TaskSerializer,
    task_item,
)
from tasks_market.api.views.common import PROVIDER_ERRORS, body_rules
from tasks_market.counters import OPEN_TASKS
from tasks_market.filters import TaskFilter
from tasks_market.models import Task, TaskStatus
from tasks_market.services import tasks as services

TAGS = ["tasks"]

# What stands for the caller, the status filter and a cursor's position in the list's compiled query
# (never sent to PostgreSQL).
_VIEWER = uuid.UUID(int=0)
_STATUS = "\x00status"
_AFTER = (datetime(1, 1, 1, 0, 0, 0, 1, tzinfo=UTC), uuid.UUID(int=1))
ORDER = (("created_at", "id"), True)  # the list's order (selectors.tasks_list), for keyset cursors
OPEN_PAGES = StampedPages(OPEN_TASKS)


def _kept_total(scope: str, filtered: bool) -> bool:
    """The open list unfiltered reads its kept count; the others count their (per-user or empty) range
    (docs/decisions.md#lists)."""
    return scope == "open" and not filtered


def _tasks_page(user, scope: str, status: str | None, after: tuple | None, *, limit: int, offset: int) -> Page:
    """A page of the list as rows (TASK_COLUMNS), its total, has_more and next_cursor, in one query."""
    viewer_id = user.pk if user else None
    values = ([viewer_id] if scope == "mine" else []) + ([status] if status else [])

    def count() -> int:
        if _kept_total(scope, bool(status)):
            return counters.count_of(OPEN_TASKS)
        return selectors.tasks_list(user, scope=scope, status=status).count()

    if after is None:
        rows, total, has_more = page_compiled(
            _list_read(scope, bool(status)), values, limit=limit, offset=offset, count=count
        )
        return Page(rows, total, has_more, page_cursor(rows, ORDER, has_more))
    return keyset_page_compiled(
        _list_read(scope, bool(status), keyset=True), [*values, *after], limit=limit, order=ORDER, count=count
    )


def _page_body(page: Page, viewer_id) -> dict:
    return {
        "items": [task_item(row, viewer_id) for row in page.rows],
        "total": page.total,
        "has_more": page.has_more,
        "next_cursor": page.next_cursor,
    }


@cache
def _list_read(scope: str, filtered: bool, keyset: bool = False) -> PrecompiledQuery:
    """The list's page and total in one query, compiled once per process per shape (core.precompiled)."""
    placeholders = ([_VIEWER] if scope == "mine" else []) + ([_STATUS] if filtered else [])
    placeholders += list(_AFTER) if keyset else []

    def build(*values):
        values = list(values)
        viewer = values.pop(0) if scope == "mine" else _VIEWER
        status = values.pop(0) if filtered else None
        queryset = selectors.tasks_list(viewer, scope=scope, status=status)
        total = counters.total_of(OPEN_TASKS) if _kept_total(scope, filtered) else None
        if keyset:
            queryset = keyset_after(queryset, ORDER, values)
            if total is None:  # the whole list's total, not what is left after the cursor
                total = count_rows(selectors.tasks_list(viewer, scope=scope, status=status))
        return counted(queryset.values(*TASK_COLUMNS), total)

    return PrecompiledQuery(
        build,
        placeholders,
        page=True,
    )


class TaskListView(ApiView):
    access = Access.USER_OR_KEY

    @extend_schema(
        operation_id="tasks_list",
        summary="List your tasks, or the open ones",
        description=(
            "`scope=mine` (the default): the tasks you posted; `scope=open`: every open task, to bid on. Optionally "
            "filtered by `status`; newest first."
        ),
        tags=TAGS,
        parameters=[PageQuery, parameters(TaskFilter)],
        responses=envelope(TaskSerializer),
    )
    def get(self, request):
        params = self.query(PageQuery, TaskFilter)
        scope, status = params["scope"], params.get("status")
        if scope == "open" and status == TaskStatus.OPEN:
            status = None  # the same rows: the kept count answers
        after = decode_cursor(params.get("cursor"), ORDER, Task, offset=params["offset"])
        limit, offset = params["limit"], params["offset"]
        viewer_id = request.user.pk if request.user else None

        def read() -> Page:
            return _tasks_page(request.user, scope, status, after, limit=limit, offset=offset)

        if not _kept_total(scope, bool(status)):
            return Response(_page_body(read(), viewer_id))
        # The open list, the same for every caller but `is_mine`: kept per state of its count
        # (core.pagecache), rendered once per pattern of the caller's own rows on the page.
        entry = OPEN_PAGES.page((limit, offset, after), read)
        mine = tuple(viewer_id is not None and row["poster_id"] == viewer_id for row in entry.page.rows)
        return Response(Rendered(entry, mine, lambda: _page_body(entry.page, viewer_id)))

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
