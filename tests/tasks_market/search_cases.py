"""The task search's fixture and its cases, hand-computed, shared by the PostgreSQL tests
(tests/tasks_market/test_task_search.py) and the SQLite run (tests.tasks_market.counts_churn).

Tasks are numbered 1..8, 1 the newest; 8 is cancelled (never in the open list). Deadlines are days from
BASE; amounts compare as numbers whatever the currency (docs/decisions.md#task-search).
"""

from __future__ import annotations

from datetime import UTC, datetime, timedelta
from decimal import Decimal

BASE = datetime(2030, 1, 1, 12, 0, tzinfo=UTC)

# number: (title, category, amount, currency, deadline in days from BASE, description, requirements)
TASKS = {
    1: (
        "Competitor research report",
        "research",
        "150.00",
        "eur",
        10,
        "Analyse five competitors' pricing pages and their survey tools.",
        ["sources cited"],
    ),
    2: ("Market research survey", "research", "100.00", "eur", 5, "Design a survey for dashboard customers.", []),
    3: (
        "Landing page copy",
        "content",
        "40.00",
        "usd",
        3,
        "Three variants of research-backed copy.",
        ["plain English"],
    ),
    4: ("Logo redesign", "design", "300.00", "usd", 20, "A new logo for the analytics brand.", []),
    5: ("Data pipeline cleanup", "data", "100.00", "eur", 5, "Deduplicate the customer table.", ["Python"]),
    6: (
        "Research interviews",
        "research",
        "99.99",
        "usd",
        7,
        "Interview customers about pricing.",
        ["five interviews"],
    ),
    7: ("Budget spreadsheet", "data", "100", "jpy", 30, "A monthly budget spreadsheet.", []),
    8: ("Old research brief", "research", "80.00", "usd", 4, "Cancelled before anyone bid.", []),
}
CANCELLED = {8}


def day(days: int) -> str:
    return (BASE + timedelta(days=days)).isoformat().replace("+00:00", "Z")


# (query string, the tasks in the order answered)
CASES: list[tuple[str, list[int]]] = [
    ("scope=open&category=research", [1, 2, 6]),
    ("scope=open&category=research&category=data", [1, 2, 5, 6, 7]),
    ("scope=open&currency=eur", [1, 2, 5]),
    ("scope=open&min_budget=100", [1, 2, 4, 5, 7]),
    ("scope=open&min_budget=100&max_budget=100", [2, 5, 7]),
    ("scope=open&max_budget=99.99", [3, 6]),
    ("scope=open&category=research&min_budget=100", [1, 2]),
    (f"scope=open&deadline_before={day(5)}", [2, 3, 5]),
    (f"scope=open&deadline_after={day(7)}&deadline_before={day(20)}", [1, 4, 6]),
    ("scope=open&sort=budget", [4, 1, 2, 5, 7, 6, 3]),
    ("scope=open&sort=deadline", [3, 2, 5, 6, 1, 4, 7]),
    ("scope=open&currency=usd&sort=budget", [4, 6, 3]),
    ("scope=open&q=research", [1, 2, 3, 6]),
    ("scope=open&q=customers+pricing", [6]),
    ("scope=open&q=interview", [6]),
    ("scope=open&q=analyse", [1]),
    ("scope=open&q=survey", [1, 2]),
    ("scope=open&q=survey&sort=relevance", [2, 1]),
    ("scope=open&q=nothing+like+this", []),
    ("scope=open&q=%21%C2%B6%C2%9A&sort=relevance", []),  # no word to look for, by relevance: nothing, not an error
    ("scope=mine&q=%21%21&sort=relevance", []),
    ("scope=open&q=research&category=content", [3]),
    ("scope=mine&category=research", [1, 2, 6, 8]),
    ("scope=mine&currency=usd&sort=deadline", [3, 8, 6, 4]),
]


def create(poster) -> dict[int, object]:
    """The fixture's tasks, created through the ORM, their creation times one minute apart (1 the newest)."""
    from tasks_market.models import Task, TaskStatus

    made = {}
    for number, (title, category, amount, currency, days, description, requirements) in TASKS.items():
        task = Task.objects.create(
            poster=poster,
            title=title,
            description=description,
            budget_amount=Decimal(amount),
            budget_currency=currency,
            deadline=BASE + timedelta(days=days),
            category=category,
            requirements=requirements,
            status=TaskStatus.CANCELLED if number in CANCELLED else TaskStatus.OPEN,
        )
        Task.objects.filter(pk=task.pk).update(created_at=BASE - timedelta(days=400, minutes=number))
        made[number] = task.pk
    return made


def numbers(ids: list, made: dict[int, object]) -> list[int]:
    by_id = {str(task_id): number for number, task_id in made.items()}
    return [by_id.get(str(task_id), -1) for task_id in ids]


def answered(user, query: str, *, limit: int = 100) -> tuple[list, dict]:
    """The list's answer to `query` for `user`, read as the view reads it (parse, then the search or the plain
    list): its ids and (total, total_exact, next_cursor)."""
    from django.http import QueryDict

    from core.api.filters import parse
    from tasks_market.filters import TaskFilter, search_of
    from tasks_market.selectors.task_search import task_search_read

    params = parse(TaskFilter, QueryDict(query))
    read = task_search_read(
        user,
        scope=params["scope"],
        status=params.get("status"),
        search=search_of(params),
        cursor=None,
        limit=limit,
        offset=0,
    )
    meta = {"total": read.page.total, "total_exact": read.exact, "next_cursor": read.page.next_cursor}
    return [row["id"] for row in read.page.rows], meta


def check(poster) -> list[str]:
    """Every case on this database: the differences from the hand-computed answers (empty when all agree).
    The fixture's tasks are deleted after."""
    from tasks_market.models import Task

    made = create(poster)
    try:
        failures = []
        for query, expected in CASES:
            ids, meta = answered(poster, query)
            got = numbers(ids, made)
            if got != expected or meta["total"] != len(expected) or not meta["total_exact"]:
                failures.append(f"{query}: {got} (total {meta['total']}), expected {expected}")
        return failures
    finally:
        Task.objects.filter(pk__in=made.values()).delete()
