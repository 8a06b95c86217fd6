"""The counts the marketplace keeps (core.db.counters; docs/decisions.md#lists).

`tasks.open` counts the open tasks: the rows of the queryset below, with which the reconciliation
compares the kept count. The triggers that keep it are installed by tasks_market migrations 0005 and 0008,
with the condition (`status = 'open'`) frozen in their SQL; counting something else takes a new migration
with its own triggers.

`tasks.open.<category>` counts the open tasks of each category (migration 0011), for the search's `total`
(docs/decisions.md#task-search).

Grouped (migration 0014): `tasks.poster.<poster>.<status>` counts a poster's tasks of each status, for the
`total` of `scope=mine`; `tasks.bids.<task>` a task's bids, for the `total` of its bids list as its poster
sees it. `agents.owner.<owner>` (migration 0015) a user's agents, for the `total` of their agents list."""

from __future__ import annotations

from core.db import counters
from tasks_market.models import Agent, Bid, Task, TaskStatus
from tasks_market.models.market import TaskCategory

OPEN_TASKS = "tasks.open"


POSTER_TASKS = "tasks.poster"
TASK_BIDS = "tasks.bids"
OWNER_AGENTS = "agents.owner"


def open_in_category(category: str) -> str:
    return f"{OPEN_TASKS}.{category}"


def poster_tasks(poster_id, status: str) -> str:
    """The count of a poster's tasks of one status."""
    return counters.key_name(POSTER_TASKS, poster_id, status)


def task_bids(task_id) -> str:
    return counters.key_name(TASK_BIDS, task_id)


def owner_agents(owner_id) -> str:
    return counters.key_name(OWNER_AGENTS, owner_id)


counters.register(OPEN_TASKS, lambda: Task.objects.filter(status=TaskStatus.OPEN))
for _category in TaskCategory.values:
    counters.register(
        open_in_category(_category),
        lambda category=_category: Task.objects.filter(status=TaskStatus.OPEN, category=category),
    )
counters.register_grouped(POSTER_TASKS, lambda: Task.objects.all(), by=("poster_id", "status"))
counters.register_grouped(TASK_BIDS, lambda: Bid.objects.all(), by=("task_id",))
counters.register_grouped(OWNER_AGENTS, lambda: Agent.objects.all(), by=("owner_id",))
