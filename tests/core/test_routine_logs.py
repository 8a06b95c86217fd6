"""Routine periodic work at DEBUG (core/ops/routine_logs.py): beat's sends of scheduled tasks and the worker's
receipt and success lines for them are dropped at INFO and shown at DEBUG; anything else passes. The local
profile (`make run`) sets the filter on Celery's loggers."""

from __future__ import annotations

import logging
import os
import subprocess
import sys
from pathlib import Path
from types import SimpleNamespace

import pytest
from celery.app import trace
from celery.beat import Scheduler

from core.ops.routine_logs import LOGGERS, RoutinePeriodicToDebug

ROOT = Path(__file__).resolve().parents[2]
SCHEDULED = "scrapers.tasks.poll_snapshots"


class Lines(logging.Handler):
    def __init__(self):
        super().__init__(logging.DEBUG)
        self.records: list[logging.LogRecord] = []

    def emit(self, record):
        self.records.append(record)

    def lines(self) -> list[str]:
        return [f"{r.levelname} {r.getMessage()}" for r in self.records]


@pytest.fixture
def celery_logs():
    """Celery's three loggers with the filter (for SCHEDULED) and a handler of their own, at INFO."""
    handler = Lines()
    routine = RoutinePeriodicToDebug([SCHEDULED])
    loggers = [logging.getLogger(name) for name in LOGGERS]
    saved = [(logger.level, logger.propagate) for logger in loggers]
    for logger in loggers:
        logger.addFilter(routine)
        logger.addHandler(handler)
        logger.setLevel(logging.INFO)
        logger.propagate = False
    yield SimpleNamespace(handler=handler, loggers=loggers)
    for logger, (level, propagate) in zip(loggers, saved, strict=True):
        logger.removeFilter(routine)
        logger.removeHandler(handler)
        logger.setLevel(level)
        logger.propagate = propagate


def beat_sends(task: str) -> None:
    """celery.beat.Scheduler.apply_entry itself: it logs the send, then publishes (here: nothing)."""
    scheduler = SimpleNamespace(apply_async=lambda *args, **kwargs: None)
    Scheduler.apply_entry(scheduler, SimpleNamespace(name=task.rpartition(".")[2], task=task))


def worker_runs(task: str) -> None:
    """The worker's lines for one task: received (celery.worker.strategy's call) and succeeded (trace's)."""
    context = {"id": "6f1c", "name": task, "args": "()", "kwargs": "{}", "eta": None}
    logging.getLogger("celery.worker.strategy").info(trace.LOG_RECEIVED, context, extra={"data": context})
    trace.info(trace.LOG_SUCCESS, {"id": "6f1c", "name": task, "return_value": 0, "runtime": 0.01})


def test_a_scheduled_tasks_send_receipt_and_success_are_dropped_at_info(celery_logs):
    beat_sends(SCHEDULED)
    worker_runs(SCHEDULED)

    assert celery_logs.handler.lines() == []


def test_they_are_debug_lines_when_debug_is_on(celery_logs):
    for logger in celery_logs.loggers:
        logger.setLevel(logging.DEBUG)

    beat_sends(SCHEDULED)
    worker_runs(SCHEDULED)

    assert celery_logs.handler.lines() == [
        f"DEBUG Scheduler: Sending due task poll_snapshots ({SCHEDULED})",
        f"DEBUG {SCHEDULED} sent.",  # beat's own DEBUG line after the send
        f"DEBUG Task {SCHEDULED}[6f1c] received",
        f"DEBUG Task {SCHEDULED}[6f1c] succeeded in 0.01s: 0",
    ]


def test_other_tasks_and_a_scheduled_tasks_failures_pass_as_they_came(celery_logs):
    worker_runs("tasks_market.tasks.dispatch_delivery")
    logging.getLogger("celery.app.trace").error(
        trace.LOG_FAILURE, {"id": "6f1c", "name": SCHEDULED, "description": "raised unexpected", "exc": "boom"}
    )

    assert celery_logs.handler.lines() == [
        "INFO Task tasks_market.tasks.dispatch_delivery[6f1c] received",
        "INFO Task tasks_market.tasks.dispatch_delivery[6f1c] succeeded in 0.01s: 0",
        f"ERROR Task {SCHEDULED}[6f1c] raised unexpected: boom",
    ]


PROBE = """
import django
django.setup()
from tests.core.test_routine_logs import beat_sends, worker_runs
beat_sends("scrapers.tasks.poll_snapshots")
worker_runs("scrapers.tasks.poll_snapshots")
worker_runs("tasks_market.tasks.dispatch_delivery")
"""


@pytest.mark.parametrize("level", ["INFO", "DEBUG"])
def test_the_local_profile_logs_the_beat_schedules_work_only_at_debug(tmp_path, level):
    env = {key: os.environ[key] for key in ("PATH", "HOME", "LANG") if key in os.environ}
    env.update(DJANGO_SETTINGS_MODULE="config.settings.local", VAR_DIR=str(tmp_path), LOG_LEVEL=level)
    result = subprocess.run(
        [sys.executable, "-c", PROBE], cwd=ROOT, env=env, capture_output=True, text=True, timeout=120, check=True
    )

    assert "Task tasks_market.tasks.dispatch_delivery[6f1c] succeeded" in result.stderr  # the handler works
    routine = (
        "Sending due task poll_snapshots",
        f"Task {SCHEDULED}[6f1c] received",
        f"Task {SCHEDULED}[6f1c] succeeded",
    )
    if level == "INFO":
        assert not any(line in result.stderr for line in routine), result.stderr
    else:
        shown = [line for line in result.stderr.splitlines() if any(r in line for r in routine)]
        assert len(shown) == 3 and all(" DEBUG celery." in line for line in shown), result.stderr
