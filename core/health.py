"""Real checks of what the service needs: database, cache and broker."""

from __future__ import annotations

import logging
import uuid

from celery import current_app
from django.conf import settings
from django.core.cache import cache
from django.db import connection

logger = logging.getLogger(__name__)


def check_database() -> None:
    with connection.cursor() as cursor:
        cursor.execute("SELECT 1")
        cursor.fetchone()


def check_cache() -> None:
    key, value = f"health:{uuid.uuid4().hex}", uuid.uuid4().hex
    cache.set(key, value, 10)
    try:
        if cache.get(key) != value:
            raise RuntimeError("cache did not return what was written")
    finally:
        cache.delete(key)


def check_broker() -> None:
    # The project's app (config/celery_app.py), current once the settings package is imported.
    with current_app.connection_for_write() as conn:
        conn.ensure_connection(max_retries=1, interval_start=0, interval_step=0, timeout=2)


CHECKS = {"database": check_database, "cache": check_cache, "broker": check_broker}


def draining() -> bool:
    """Whether this node is stopping: scripts/supervise.py creates the file on SIGTERM and keeps the web
    server serving for SHUTDOWN_DRAIN_SECONDS while readiness fails (docs/operations.md, "Processes and
    signals"). A file, so that every gunicorn worker process sees the same state."""
    return (settings.VAR_DIR / "draining").exists()


def run_checks() -> dict[str, str]:
    results = {}
    for name, check in CHECKS.items():
        try:
            check()
        except Exception as exc:
            logger.warning("health check %s failed: %s", name, exc)
            results[name] = f"error: {type(exc).__name__}"
        else:
            results[name] = "ok"
    return results
