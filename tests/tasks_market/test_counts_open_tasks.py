"""The open-task count is kept exactly, whoever writes (core.db.counters; docs/decisions.md#lists)."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest
from django.db import connection, transaction

from core.db import counters
from tasks_market.counters import OPEN_TASKS
from tasks_market.models import Task, TaskStatus
from tests.tasks_market.counts_churn import ROUNDS, SQLITE_ROUNDS, SQLITE_THREADS, THREADS, churn
from tests.tasks_market.factories import TaskFactory
from tools.nodes import testenv

ROOT = Path(__file__).resolve().parents[2]


def _open() -> int:
    return Task.objects.filter(status=TaskStatus.OPEN).count()


@pytest.mark.django_db
def test_every_kind_of_write_keeps_the_count(alice, bob):
    tasks = [TaskFactory(poster=alice) for _ in range(3)]
    TaskFactory(poster=bob, status=TaskStatus.CANCELLED)
    assert counters.count_of(OPEN_TASKS) == _open() == 3

    Task.objects.filter(pk=tasks[0].pk).update(status=TaskStatus.CANCELLED)  # QuerySet.update
    Task.objects.filter(pk=tasks[1].pk).update(title="renamed")  # no move in or out
    tasks[2].delete()
    assert counters.count_of(OPEN_TASKS) == _open() == 1

    with connection.cursor() as cursor:  # bulk SQL, as the bench and the peer comparison add rows
        cursor.execute(
            "INSERT INTO tasks_market_task SELECT * FROM tasks_market_task WHERE false"  # no row: no change
        )
    try:
        with transaction.atomic():
            TaskFactory(poster=alice)
            raise RuntimeError
    except RuntimeError:
        pass
    assert counters.count_of(OPEN_TASKS) == _open() == 1


@pytest.mark.django_db
def test_the_reconciliation_reports_and_fixes_drift(alice):
    TaskFactory(poster=alice)
    from core.models import Counter

    Counter.objects.filter(name=OPEN_TASKS).update(value=0)
    # The create above wrote its backend's shard (pg_backend_pid() % SHARDS), which may be this one.
    Counter.objects.update_or_create(name=OPEN_TASKS, shard=counters.SHARDS - 1, defaults={"value": 5})

    report = counters.counters_reconcile()

    assert report[OPEN_TASKS] == {"kept": 5, "actual": 1, "drift": -4}
    assert counters.count_of(OPEN_TASKS) == 1
    assert counters.counters_reconcile()[OPEN_TASKS]["drift"] == 0


@pytest.mark.django_db(transaction=True)
def test_concurrent_creates_selects_cancels_and_completes_never_drift(alice):
    """Threads released together, each write in its own transaction: the kept count equals a fresh COUNT."""
    failures = churn(alice)

    assert failures == []
    assert counters.counters_reconcile(fix=False)[OPEN_TASKS]["drift"] == 0
    assert counters.count_of(OPEN_TASKS) == _open() == THREADS * ROUNDS // 4


def test_the_same_on_the_embedded_sqlite_database(tmp_path):
    """`make run`'s default: SQLite, its row triggers, the same churn (in a process of its own), every grouped
    count through every kind of write; and the task search's hand-computed cases on its FTS5 table (the same
    cases as tests/tasks_market/test_task_search.py)."""
    env = {k: v for k, v in os.environ.items() if k not in ("DATABASE_URL", "REDIS_URL", "CELERY_BROKER_URL")}
    env.update(DJANGO_SETTINGS_MODULE="config.settings.local", VAR_DIR=str(tmp_path / "var"))
    testenv.migrated_sqlite(env)  # the run's migrated database, copied (its `migrate` then has nothing to do)
    done = subprocess.run(
        [sys.executable, "-m", "tests.tasks_market.counts_churn"],
        cwd=ROOT,
        env=env,
        capture_output=True,
        text=True,
        timeout=240,
        check=False,
    )
    assert done.returncode == 0, done.stderr[-3000:]
    result = json.loads(done.stdout.strip().splitlines()[-1])

    assert len(counters.registered_grouped()) == 7
    assert result == {
        "vendor": "sqlite",
        "failures": [],
        "kept": SQLITE_THREADS * SQLITE_ROUNDS // 4,
        "actual": SQLITE_THREADS * SQLITE_ROUNDS // 4,
        "drift": 0,
        "walk_equals_the_list": True,
        "stamp_moves_with_every_write": True,
        "kept_pages_follow_writes": True,
        "search_failures": [],
        "grouped": {
            "drift": dict.fromkeys(sorted(counters.registered_grouped()), 0),  # all seven families
            "totals": {"null": True, "open": True, "completed": True},
        },
    }


@pytest.mark.django_db
def test_the_command_reports_drift_and_check_fails_on_it(alice):
    from django.core.management import CommandError, call_command

    from core.models import Counter

    TaskFactory(poster=alice)
    Counter.objects.filter(name=OPEN_TASKS).update(value=7)

    with pytest.raises(CommandError):
        call_command("counters_reconcile", "--check")
    call_command("counters_reconcile")
    call_command("counters_reconcile", "--check")
    assert counters.count_of(OPEN_TASKS) == 1


@pytest.mark.django_db
def test_the_stamp_moves_with_every_write_of_a_counted_row_and_only_then(alice):
    from tests.tasks_market.counts_churn import _stamp_moves

    assert _stamp_moves(alice)
