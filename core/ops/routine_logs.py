"""Routine periodic work logged at DEBUG, not INFO (the local profile's LOGGING, config/settings/local.py).

Celery logs at INFO each message beat sends (`Scheduler: Sending due task ...`) and, in the worker, each
task received and each task that succeeded. With the beat schedule's 10-second entry that is about 30
lines a minute in a terminal that has nothing else to say, and `make run`'s banner scrolls away within a
minute. `RoutinePeriodicToDebug`, set on those three loggers, makes these three lines DEBUG records when
they are about a task of CELERY_BEAT_SCHEDULE: dropped at INFO, shown with LOG_LEVEL=DEBUG (or Celery's
--loglevel=DEBUG). Everything else passes as it came: other tasks' lines, and every warning, retry or
failure of the scheduled tasks themselves.
"""

from __future__ import annotations

import logging
from collections.abc import Iterable

from celery.app.trace import LOG_RECEIVED, LOG_SUCCESS
from django.conf import settings

BEAT_SENDS = "Scheduler: Sending due task %s (%s)"  # celery.beat.Scheduler.apply_entry's message
LOGGERS = ("celery.beat", "celery.worker.strategy", "celery.app.trace")


class RoutinePeriodicToDebug(logging.Filter):
    """Turns Celery's INFO lines about a scheduled task's send, receipt and success into DEBUG records
    (kept only where DEBUG is enabled). `tasks`: the task names; by default those of CELERY_BEAT_SCHEDULE."""

    def __init__(self, tasks: Iterable[str] | None = None):
        super().__init__()
        self._tasks = frozenset(tasks) if tasks is not None else None

    @property
    def tasks(self) -> frozenset[str]:
        if self._tasks is None:  # settings are read at the first record, once they are configured
            self._tasks = frozenset(entry["task"] for entry in getattr(settings, "CELERY_BEAT_SCHEDULE", {}).values())
        return self._tasks

    def filter(self, record: logging.LogRecord) -> bool:
        if record.levelno != logging.INFO or not self._routine(record):
            return True
        record.levelno, record.levelname = logging.DEBUG, logging.getLevelName(logging.DEBUG)
        return logging.getLogger(record.name).isEnabledFor(logging.DEBUG)

    def _routine(self, record: logging.LogRecord) -> bool:
        args = record.args
        if record.msg == BEAT_SENDS:
            return isinstance(args, tuple) and len(args) == 2 and args[1] in self.tasks
        if record.msg in (LOG_RECEIVED, LOG_SUCCESS):
            return isinstance(args, dict) and args.get("name") in self.tasks
        return False
