"""The counts the marketplace keeps (core.db.counters; docs/decisions.md#lists).

`tasks.open` counts the open tasks: the rows of the queryset below, with which the reconciliation
compares the kept count. The triggers that keep it are installed by tasks_market migrations 0005 and 0008,
with the condition (`status = 'open'`) frozen in their SQL; counting something else takes a new migration
with its own triggers.

`tasks.open.<category>` counts the open tasks of each category (migration 0011), for the search's `total`
(docs/decisions.md#task-search)."""

from __future__ import annotations

from core.db import counters
from tasks_market.models import Task, TaskStatus
from tasks_market.models.market import TaskCategory

OPEN_TASKS = "tasks.open"


def open_in_category(category: str) -> str:
    return f"{OPEN_TASKS}.{category}"


counters.register(OPEN_TASKS, lambda: Task.objects.filter(status=TaskStatus.OPEN))
for _category in TaskCategory.values:
    counters.register(
        open_in_category(_category),
        lambda category=_category: Task.objects.filter(status=TaskStatus.OPEN, category=category),
    )
