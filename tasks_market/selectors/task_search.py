"""The task list searched (docs/decisions.md#task-search): `GET /api/v1/tasks` with any of `category`,
`currency`, `min_budget`, `max_budget`, `deadline_after`, `deadline_before`, `q`, or a `sort` other than the
newest first.

- Orders: `newest` (created_at, id, both descending), `budget` (highest first, then newest), `deadline`
  (soonest first, then newest), `relevance` (best match of `q` first, then newest). Each but `relevance` pages
  by keyset cursor through an index of its own (tasks_market migration 0011).
- `total`: exact. Kept where a kept count answers it (the open list narrowed by categories only: the sum of
  `tasks.open.<category>`), else a COUNT of the matching rows. A text query (`q`) counts up to
  SEARCH_TOTAL_CAP and says whether that is exact (`total_exact`), as GitHub's search API does; its results
  are reachable up to the cap, by an offset its cursor carries. `relevance` ranks those reachable matches (the
  newest up to the cap), so a ranked page never costs a rank of every match.
- Text: every word of `q` must match, stemmed as English, in the title, the description or the requirements.
  PostgreSQL ranks with `ts_rank` over the three weighted A, B, C (a stored `search_document`); SQLite (the
  embedded default) with FTS5's BM25 weighted 1, 0.4, 0.2: the same rules, not the same numbers.
- The open list's searches are kept as its plain pages are (core.db.pagecache), under the stamp of the open
  count, which every write of an open row moves.
"""

from __future__ import annotations

import re

from django.db import connection
from django.db.models import BooleanField, FloatField, Q, QuerySet, Value
from django.db.models.expressions import RawSQL

from core.api.pagination import (
    Page,
    decode_cursor,
    decode_offset_cursor,
    encode_cursor,
    encode_offset_cursor,
    keyset_after,
)
from core.db import counters
from core.db.pagecache import StampedPages
from tasks_market.counters import OPEN_TASKS, open_in_category
from tasks_market.models import Task, TaskStatus
from tasks_market.selectors import tasks_list
from tasks_market.selectors.task_list import TASK_COLUMNS, TaskListRead

SEARCH_TOTAL_CAP = 1000

# The task's weighted text on PostgreSQL, a column its trigger keeps (tasks_market migration 0011); not a model
# field: only this module reads it.
PG_DOCUMENT = "search_document"
PG_QUERY = "plainto_tsquery('english'::regconfig, %s)"
SQLITE_TEXT = "tasks_market_task_text"
SQLITE_WEIGHTS = "1.0, 0.4, 0.2"  # title, description, requirements: as PostgreSQL's A, B, C

ORDERS = {
    "newest": ("created_at", "id"),
    "budget": ("budget_amount", "created_at", "id"),
    "deadline": ("deadline", "created_at", "id"),
}
# Answered by the kept counts when nothing else narrows the open list.
KEPT_TOTAL_NAMES = frozenset({"category", "sort"})

SEARCH_PAGES = StampedPages(OPEN_TASKS, size=256)


def searched(queryset: QuerySet, search: dict) -> QuerySet:
    """`queryset` narrowed by the search's filters, in its order."""
    if search.get("category"):
        queryset = queryset.filter(category__in=search["category"])
    if search.get("currency"):
        queryset = queryset.filter(budget_currency=search["currency"])
    if search.get("min_budget") is not None:
        queryset = queryset.filter(budget_amount__gte=search["min_budget"])
    if search.get("max_budget") is not None:
        queryset = queryset.filter(budget_amount__lte=search["max_budget"])
    if search.get("deadline_after"):
        queryset = queryset.filter(deadline__gte=search["deadline_after"])
    if search.get("deadline_before"):
        queryset = queryset.filter(deadline__lte=search["deadline_before"])
    sort = search.get("sort", "newest")
    if search.get("q"):
        queryset = _text_match(queryset, search["q"], ranked=sort == "relevance")
    if sort == "relevance":  # the reachable matches (the newest, up to the cap) by rank: never a rank of every match
        reachable = queryset.order_by("-created_at", "-id").values("pk")[:SEARCH_TOTAL_CAP]
        return queryset.filter(pk__in=reachable).order_by("-rank", "-created_at", "-id")
    if sort == "deadline":
        return queryset.order_by("deadline", "-created_at", "-id")
    return queryset.order_by(*(f"-{name}" for name in ORDERS[sort]))


def _text_match(queryset: QuerySet, q: str, *, ranked: bool) -> QuerySet:
    # RawSQL: the SQL is this module's constants (a column the model does not know, SQLite's FTS5 table); the
    # caller's words are a bound parameter.
    if connection.vendor == "postgresql":
        match = RawSQL(f"{PG_DOCUMENT} @@ {PG_QUERY}", [q], output_field=BooleanField())  # noqa: S611
        rank = RawSQL(f"ts_rank({PG_DOCUMENT}, {PG_QUERY})", [q], output_field=FloatField())  # noqa: S611
    else:
        terms = fts5_query(q)
        if not terms:  # no word to look for (punctuation, symbols): nothing matches, ranked like the rest
            nothing = queryset.none()
            return nothing.annotate(rank=Value(0.0, output_field=FloatField())) if ranked else nothing
        match = RawSQL(  # noqa: S611
            f"rowid IN (SELECT rowid FROM {SQLITE_TEXT} WHERE {SQLITE_TEXT} MATCH %s)",  # noqa: S608
            [terms],
            output_field=BooleanField(),
        )
        rank = RawSQL(  # noqa: S611
            f"(SELECT -bm25({SQLITE_TEXT}, {SQLITE_WEIGHTS}) FROM {SQLITE_TEXT} "  # noqa: S608
            f"WHERE {SQLITE_TEXT} MATCH %s AND {SQLITE_TEXT}.rowid = tasks_market_task.rowid)",
            [terms],
            output_field=FloatField(),
        )
    queryset = queryset.filter(match)
    return queryset.annotate(rank=rank) if ranked else queryset


def fts5_query(q: str) -> str:
    """`q` as an FTS5 query with PostgreSQL's `plainto_tsquery` meaning: every word, none of the syntax."""
    return " ".join(f'"{word}"' for word in re.findall(r"\w+", q))


# Reading a page ------------------------------------------------------------------------------------


def task_search_read(
    user, *, scope: str, status: str | None, search: dict, cursor: str | None, limit: int, offset: int
) -> TaskListRead:
    """The page of `scope` narrowed by `search` (tasks_market.filters.search_of), after `cursor` or at `offset`."""
    if scope == "open" and status == TaskStatus.OPEN:
        status = None  # the same rows
    position = search_position(cursor, search, offset=offset)

    def read():
        return search_page(
            user, scope=scope, status=status, search=search, position=position, limit=limit, offset=offset
        )

    if scope != "open" or status:  # a caller's own rows, or none (the open list has no other status)
        page, exact = read()
        return TaskListRead(page, None, exact)
    entry = SEARCH_PAGES.page((search_key(search), limit, offset, position), read)
    page, exact = entry.page
    return TaskListRead(page, entry, exact)


def search_position(cursor: str | None, search: dict, *, offset: int):
    """Where the page starts: the decoded keyset cursor (a tuple), a text search's offset (an int), or None
    (the `offset` parameter); a 422 in the contract's shape for a cursor not of this list."""
    if search.get("q"):
        return decode_offset_cursor(cursor, offset=offset)
    return decode_cursor(cursor, (ORDERS[search.get("sort", "newest")], True), Task, offset=offset)


def search_page(user, *, scope: str, status: str | None, search: dict, position, limit: int, offset: int):
    """(Page of TASK_COLUMNS rows, whether its total is exact)."""
    queryset = searched(tasks_list(user, scope=scope, status=status), search)
    rows_of = queryset.values(*TASK_COLUMNS)
    if search.get("q"):
        start = offset if position is None else position
        # relevance narrows to the reachable matches: the count is of every match
        every_match = (
            searched(tasks_list(user, scope=scope, status=status), {**search, "sort": "newest"})
            if search.get("sort") == "relevance"
            else queryset
        )
        matched = every_match.order_by().values("pk")[: SEARCH_TOTAL_CAP + 1].count()
        total = min(matched, SEARCH_TOTAL_CAP)
        rows = list(rows_of[start : min(start + limit, total)]) if start < total else []
        has_more = start + len(rows) < total
        after = encode_offset_cursor(start + len(rows)) if has_more else None
        return Page(rows, total, has_more, after), matched <= SEARCH_TOTAL_CAP
    order = (ORDERS[search.get("sort", "newest")], True)
    if scope == "open" and not status and set(search) <= KEPT_TOTAL_NAMES and search.get("category"):
        total = counters.sum_of(open_in_category(category) for category in set(search["category"]))
    else:
        total = queryset.count()
    if position is None:
        rows = list(rows_of[offset : offset + limit])
        has_more = offset + len(rows) < total
    else:
        rows = list(_after(rows_of, search.get("sort", "newest"), position)[: limit + 1])
        has_more = len(rows) > limit
        rows = rows[:limit]
    return Page(rows, total, has_more, encode_cursor(rows[-1], order) if has_more and rows else None), True


def _after(queryset: QuerySet, sort: str, position: tuple) -> QuerySet:
    if sort != "deadline":
        return keyset_after(queryset, (ORDERS[sort], True), position)
    deadline, created_at, task_id = position  # soonest first, then newest: two directions
    return queryset.filter(
        Q(deadline__gt=deadline)
        | Q(deadline=deadline, created_at__lt=created_at)
        | Q(deadline=deadline, created_at=created_at, id__lt=task_id)
    )


def search_key(search: dict) -> tuple:
    """The search as a hashable key of its kept pages."""
    return tuple(
        sorted(
            (name, tuple(sorted(set(value))) if isinstance(value, list) else value) for name, value in search.items()
        )
    )
