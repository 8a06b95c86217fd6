"""Queue a Celery task once the current transaction commits, by the task's registered name.

Services enqueue through this so they never import task modules (tasks import services). A broker that
cannot be reached is logged once at WARNING and otherwise ignored: the work stays in the database and
the beat's sweeps queue it again (see docs/operations.md#when-a-dependency-goes-away).
"""

from __future__ import annotations

import logging
import threading

from celery import current_app
from django.db import transaction
from kombu.exceptions import OperationalError

logger = logging.getLogger(__name__)


_discovery = threading.Lock()


def enqueue_after_commit(task_name: str, *args, **kwargs) -> None:
    # A named function, not a partial: Django's robust on_commit names the callback when it logs a failure.
    def send() -> None:
        enqueue_now(task_name, *args, **kwargs)

    transaction.on_commit(send, robust=True)


def enqueue_now(task_name: str, *args, **kwargs) -> bool:
    """Queue the task at once; False when the broker is unreachable. For a sweep queueing what it found,
    and for the caller that must undo its own rows when nothing was queued (brands research)."""
    if task_name not in current_app.tasks:
        # Celery discovers the apps' task modules lazily; a web process may not have imported them yet.
        # One thread discovers while the others wait: a thread looking the name up while another is still
        # importing the modules gets NotRegistered.
        with _discovery:
            if task_name not in current_app.tasks:
                current_app.loader.import_default_modules()
    try:
        # Through the registered task's signature (not send_task), so eager mode in tests is honoured.
        current_app.tasks[task_name].s(*args, **kwargs).apply_async()
    except OperationalError as exc:
        logger.warning("could not queue %s%r: the broker is unreachable (%s)", task_name, args, exc)
        return False
    return True
