"""The embedded default (`make run`: SQLite, one threaded web process) queues concurrent writers.

Run in a process of its own on config.settings.local, as `make run` runs, with twelve threads doing
read-then-write transactions at once (tests/core/sqlite_writers.py).
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]


def _run_writers(tmp_path: Path, *args: str) -> dict:
    env = {k: v for k, v in os.environ.items() if k not in ("DATABASE_URL", "REDIS_URL", "CELERY_BROKER_URL")}
    env.update(DJANGO_SETTINGS_MODULE="config.settings.local", VAR_DIR=str(tmp_path / "var"))
    done = subprocess.run(
        [sys.executable, "-m", "tests.core.sqlite_writers", *args],
        cwd=ROOT,
        env=env,
        capture_output=True,
        text=True,
        timeout=120,
        check=True,
    )
    return json.loads(done.stdout.strip().splitlines()[-1])


def test_the_embedded_database_is_wal_immediate_with_a_busy_timeout_and_no_writer_fails(tmp_path):
    result = _run_writers(tmp_path)

    assert result["options"] == {
        "transaction_mode": "IMMEDIATE",
        "timeout": 20,
        "init_command": "PRAGMA journal_mode=WAL; PRAGMA synchronous=NORMAL",
    }
    assert result["pragmas"] == {"journal_mode": "wal", "synchronous": 1}  # 1 is NORMAL
    assert result["failures"] == []
    assert result["counter"] == 12 * 15  # every read-then-write saw the one before it


def test_without_immediate_transactions_the_same_writers_fail_with_database_is_locked(tmp_path):
    """The control: SQLite's default (deferred) transactions are what failed under `make run` before."""
    result = _run_writers(tmp_path, "deferred")

    assert result["failures"]
    assert set(result["failures"]) == {"database is locked"}
    assert result["counter"] == 12 * 15 - len(result["failures"])
