"""The task list's read (`GET /api/v1/tasks`): the hottest read of the service, and the one place its parts
meet (docs/architecture.md#the-task-list).

A page is read in one query that returns its rows and the list's total together, compiled once per
process per *shape* (core.db.precompiled): which scope, whether a status filters it, whether a cursor
(keyset) or an offset positions it. `_VIEWER`, `_STATUS` and `_AFTER` stand for the caller, the status and
the cursor's position in the compiled query; each request binds its own values (they never reach
PostgreSQL).

The open list (`scope=open`, unfiltered) is the same for every caller, so two more things serve it:

- its total is *kept*: a counter that triggers keep in the writer's own transaction (core.db.counters,
  `tasks.open`), read instead of a COUNT(*) of the open rows;
- its pages are *kept*: core.db.pagecache holds each page under the *stamp* of that count (the versions its
  triggers raise with every write of an open row) in which it was read, so a request whose stamp has not
  *moved* is answered from memory, with no query but the stamp's. A page is rendered once per *variant*:
  which of its rows are the caller's own (`is_mine`), so its bytes are served as they are.

A user's own tasks (`scope=mine`) read their total from the poster's grouped kept counts
(`tasks.poster.<poster>.<status>`): the one of the status filter, or the sum over every status without one.
Their pages are not kept (one caller's list). The open list filtered by a status other than open is empty
and counts its (empty) range.
"""

from __future__ import annotations

import uuid
from dataclasses import dataclass
from datetime import UTC, datetime
from functools import cache

from core.api.pagination import (
    Page,
    count_rows,
    counted,
    keyset_after,
    keyset_page_compiled,
    page_compiled,
    page_cursor,
)
from core.db import counters
from core.db.pagecache import Entry, StampedPages
from core.db.precompiled import PrecompiledQuery
from tasks_market.counters import OPEN_TASKS, poster_tasks
from tasks_market.models import TaskStatus
from tasks_market.selectors import tasks_list

# The columns a task's representation reads (tasks_market.representation.task_item): lists fetch exactly
# these with `.values()`. Each is a column of the task table (tests/tasks_market).
TASK_COLUMNS = (
    "id",
    "poster_id",
    "title",
    "description",
    "budget_amount",
    "budget_currency",
    "deadline",
    "category",
    "requirements",
    "status",
    "remixed_from_id",
    "selected_bid_id",
    "created_at",
    "updated_at",
    "cancelled_at",
    "completed_at",
)
ORDER = (("created_at", "id"), True)  # the list's order (selectors.tasks_list), for keyset cursors

# What stands for the caller, the status filter and a cursor's position in the list's compiled query
# (never sent to PostgreSQL).
_VIEWER = uuid.UUID(int=0)
_STATUS = "\x00status"
_AFTER = (datetime(1, 1, 1, 0, 0, 0, 1, tzinfo=UTC), uuid.UUID(int=1))
# The name of the kept count the caller's list reads (one per status without a filter), as `_STATUS`.
_KEPT = "\x00kept"
_KEPT_PER_STATUS = tuple(f"\x00kept.{status}" for status in TaskStatus.values)
OPEN_PAGES = StampedPages(OPEN_TASKS)


@dataclass(frozen=True, slots=True)
class TaskListRead:
    """A page of the list (rows of TASK_COLUMNS, total, has_more, next_cursor) and, for the open list, the
    kept page it came from (whose rendered bodies the response reuses); None for every other list. `exact`:
    whether `total` is exact (not for a text search past its cap: tasks_market.selectors.task_search)."""

    page: Page
    kept: Entry | None
    exact: bool = True


def task_list_read(user, *, scope: str, status: str | None, after: tuple | None, limit: int, offset: int):
    """The page of `scope` (`mine` or `open`), filtered by `status`, after the cursor `after` or at `offset`."""
    if scope == "open" and status == TaskStatus.OPEN:
        status = None  # the same rows: the kept count answers

    def read() -> Page:
        return tasks_page(user, scope, status, after, limit=limit, offset=offset)

    if not _kept_pages(scope, bool(status)):
        return TaskListRead(read(), None)
    entry = OPEN_PAGES.page((limit, offset, after), read)
    return TaskListRead(entry.page, entry)


def _kept_pages(scope: str, filtered: bool) -> bool:
    """The open list unfiltered: its pages are kept under the stamp of its count."""
    return scope == "open" and not filtered


def _kept_total(scope: str, filtered: bool) -> bool:
    """The open list unfiltered reads its kept count, a user's own tasks theirs (by status, or summed over
    the statuses); the open list filtered by another status counts its (empty) range (docs/decisions.md#lists)."""
    return scope == "mine" or not filtered


def _kept_names(viewer_id, status: str | None) -> list[str]:
    """The kept counts whose sum is the total of the caller's own tasks (of `status`)."""
    return [poster_tasks(viewer_id, status)] if status else [poster_tasks(viewer_id, s) for s in TaskStatus.values]


def tasks_page(user, scope: str, status: str | None, after: tuple | None, *, limit: int, offset: int) -> Page:
    """A page of the list as rows (TASK_COLUMNS), its total, has_more and next_cursor, in one query."""
    viewer_id = user.pk if user else None
    values = ([viewer_id] if scope == "mine" else []) + ([status] if status else [])
    values += _kept_names(viewer_id, status) if scope == "mine" else []

    def count() -> int:
        if scope == "mine":
            return counters.sum_of(_kept_names(viewer_id, status))
        if _kept_total(scope, bool(status)):
            return counters.count_of(OPEN_TASKS)
        return tasks_list(user, scope=scope, status=status).count()

    if after is None:
        rows, total, has_more = page_compiled(
            _list_read(scope, bool(status)), values, limit=limit, offset=offset, count=count
        )
        return Page(rows, total, has_more, page_cursor(rows, ORDER, has_more))
    return keyset_page_compiled(
        _list_read(scope, bool(status), keyset=True), [*values, *after], limit=limit, order=ORDER, count=count
    )


@cache
def _list_read(scope: str, filtered: bool, keyset: bool = False) -> PrecompiledQuery:
    """The list's page and total in one query, compiled once per process per shape (core.db.precompiled)."""
    kept = ([_KEPT] if filtered else list(_KEPT_PER_STATUS)) if scope == "mine" else []
    placeholders = ([_VIEWER] if scope == "mine" else []) + ([_STATUS] if filtered else []) + kept
    placeholders += list(_AFTER) if keyset else []

    def build(*values):
        values = list(values)
        viewer = values.pop(0) if scope == "mine" else _VIEWER
        status = values.pop(0) if filtered else None
        names = [values.pop(0) for _ in kept]
        queryset = tasks_list(viewer, scope=scope, status=status)
        if scope == "mine":
            total = counters.total_of_sum(names)
        else:
            total = counters.total_of(OPEN_TASKS) if _kept_total(scope, filtered) else None
        if keyset:
            queryset = keyset_after(queryset, ORDER, values)
            if total is None:  # the whole list's total, not what is left after the cursor
                total = count_rows(tasks_list(viewer, scope=scope, status=status))
        return counted(queryset.values(*TASK_COLUMNS), total)

    return PrecompiledQuery(build, placeholders, page=True)
