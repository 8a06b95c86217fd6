"""Pruning of logs that grow with traffic: one hourly beat job (core.prune_logs), every app's own rows.

Core knows no domain model: an app that keeps such a log registers a pruner for it from its
AppConfig.ready() (`log_pruner_register`), and the job runs them all (see docs/architecture.md#retention).
How long each log is kept is a setting (see base.py).
"""

from __future__ import annotations

import logging
from collections.abc import Callable
from datetime import datetime

from django.db.models import Model, QuerySet
from django.utils import timezone

logger = logging.getLogger(__name__)

BATCH = 5_000  # rows per DELETE: short transactions, no long lock on a busy table

# Called with the job's `now`; deletes what is past its retention and returns rows deleted per log.
LogPruner = Callable[[datetime], dict[str, int]]

_pruners: list[LogPruner] = []


def delete_in_batches(queryset: QuerySet) -> int:
    model: type[Model] = queryset.model
    deleted = 0
    while True:
        pks = list(queryset.values_list("pk", flat=True)[:BATCH])
        if not pks:
            return deleted
        deleted += model.objects.filter(pk__in=pks).delete()[0]


def log_pruner_register(pruner: LogPruner) -> LogPruner:
    """Add a pruner to the hourly job; registering the same function again is a no-op."""
    if pruner not in _pruners:
        _pruners.append(pruner)
    return pruner


def logs_prune(*, now: datetime | None = None) -> dict[str, int]:
    """Run every registered pruner; returns rows deleted per log. Idempotent."""
    now = now or timezone.now()
    counts: dict[str, int] = {}
    for pruner in _pruners:
        counts.update(pruner(now))
    if any(counts.values()):
        logger.info("pruned old log rows: %s", counts)
    return counts
