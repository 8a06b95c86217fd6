"""Real checks of what the service needs: database, cache and broker, remembered for a moment.

`/health` is public and not rate limited (load balancers probe it), so a flood of it must not become a
flood of cache writes and broker connections. `readiness()` keeps the last result per process:

- the checks run at most once per HEALTH_CHECK_INTERVAL_SECONDS in a process (0: on every call);
- at most one call runs them at a time; a call that finds them running answers the last result at once
  rather than wait or check too (only the process's first calls, with no result yet, wait for one);
- a result is never answered past its interval unless a check is running, so after a dependency changes
  state every process answers the new state within the interval plus one check's run.

docs/operations.md#health-and-logs says what a probe sees.
"""

from __future__ import annotations

import logging
import threading
import time
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


# The last result and when its run started (time.monotonic()), swapped as one tuple; the lock is held by the
# one call that runs the checks.
_last: tuple[dict[str, str], float] | None = None
_running = threading.Lock()


def readiness() -> dict[str, str]:
    """run_checks(), remembered for HEALTH_CHECK_INTERVAL_SECONDS in this process (see the module's docstring)."""
    global _last
    interval = settings.HEALTH_CHECK_INTERVAL_SECONDS
    if interval <= 0:
        return run_checks()
    last = _last
    if last is not None and time.monotonic() - last[1] < interval:
        return last[0]
    if not _running.acquire(blocking=last is None):
        return last[0]  # another call is checking: the last result meanwhile
    try:
        last = _last
        if last is not None and time.monotonic() - last[1] < interval:
            return last[0]  # it finished while this call waited for the lock
        started = time.monotonic()
        results = run_checks()
        _last = (results, started)
        return results
    finally:
        _running.release()


def readiness_forget() -> None:
    """Drop the remembered result (tests)."""
    global _last
    _last = None
