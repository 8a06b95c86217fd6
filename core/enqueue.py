"""How services queue background work: by the task's registered name, once the transaction commits.

Services never import Celery task modules (the tasks import the services), and a broker that cannot
be reached is handled here only: logged once, and the work is left to its beat sweep (see
docs/decisions.md#background-work).
"""

from __future__ import annotations

import logging
from functools import cache, partial

from celery import current_app
from django.db import transaction
from kombu.exceptions import OperationalError

logger = logging.getLogger(__name__)


def enqueue_after_commit(task_name: str, *args, **kwargs) -> None:
    """Send the task `task_name` with these arguments once the current transaction commits (at once
    outside a transaction). Robust: a failing send never breaks the commit or the other callbacks."""
    transaction.on_commit(partial(enqueue_now, task_name, *args, **kwargs), robust=True)


def enqueue_now(task_name: str, *args, **kwargs) -> bool:
    """Send the task now; False when the broker cannot be reached. For sweeps that send what they found,
    and for the rare caller that must undo its own state when nothing was sent."""
    task = _registered_tasks()[task_name]  # a misspelt name fails loudly (tests/test_enqueue_names.py checks them)
    try:
        task.apply_async(args, kwargs)  # retried briefly per CELERY_TASK_PUBLISH_RETRY_POLICY, then given up
    except OperationalError as exc:
        logger.warning("The task broker is unreachable: %s not sent (%s)", task_name, exc)
        return False
    return True


@cache
def _registered_tasks():
    """Celery's task registry with every app's tasks module imported (a web process imports them only
    here). Sent through the registered task, a message keeps the task's options and, in tests, runs
    eagerly (`send_task` never does)."""
    current_app.loader.import_default_modules()
    return current_app.tasks
