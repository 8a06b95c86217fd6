from __future__ import annotations

from celery import shared_task
from django.core.cache import cache

from core.db.counters import counters_reconcile
from core.http.idempotency import idempotency_keys_prune
from core.ops.retention import logs_prune


@shared_task(name="core.tasks.ping")
def ping(token: str) -> str:
    """Diagnostics: proves a worker consumes from the broker and reaches the cache.

    `celery -A config call core.tasks.ping --args='["x"]'`, then look for `ping:x` in the cache.
    """
    cache.set(f"ping:{token}", "pong", 300)
    return "pong"


@shared_task(name="core.tasks.prune_logs", ignore_result=True)
def prune_logs() -> dict[str, int]:
    return logs_prune()


@shared_task(name="core.tasks.prune_idempotency_keys")
def prune_idempotency_keys() -> int:
    """Deletes `Idempotency-Key` records past their 24 hours (lookups already ignore them)."""
    return idempotency_keys_prune()


@shared_task(name="core.tasks.reconcile_counters")
def reconcile_counters() -> dict[str, dict[str, int]]:
    """Kept counts against a fresh COUNT, drift fixed and returned (core.db.counters)."""
    return counters_reconcile()
