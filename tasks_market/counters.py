"""The counts the marketplace keeps (core.db.counters; docs/decisions.md#lists).

`tasks.open` counts the open tasks: the rows of the queryset below, with which the reconciliation
compares the kept count. The triggers that keep it are installed by tasks_market migrations 0005 and 0008,
with the condition (`status = 'open'`) frozen in their SQL; counting something else takes a new migration
with its own triggers."""

from __future__ import annotations

from core.db import counters
from tasks_market.models import Task, TaskStatus

OPEN_TASKS = "tasks.open"

counters.register(OPEN_TASKS, lambda: Task.objects.filter(status=TaskStatus.OPEN))
