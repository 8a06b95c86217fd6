"""The counts the marketplace keeps (core.counters; docs/decisions.md#lists)."""

from __future__ import annotations

from core import counters
from tasks_market.models import Task, TaskStatus

OPEN_TASKS = "tasks.open"
OPEN_TASKS_TRIGGER = {"name": OPEN_TASKS, "table": "tasks_market_task", "condition": "{row}.status = 'open'"}

counters.register(OPEN_TASKS, lambda: Task.objects.filter(status=TaskStatus.OPEN))
