#!/usr/bin/env python3
"""Soak `make run`: the embedded stack (web, worker, beat) under a steady mixed load for N minutes.

On demand, never part of `make test` (a 60-second version with a torn broker message is,
tests/e2e/test_soak.py):

    .venv/bin/python scripts/soak.py [--minutes 30] [--tear-every 300]

Starts `make run` in a fresh VAR_DIR (tools/nodes.py), drives it with writers (post a task, bid on
it: each bid queues a judge job) and readers, polls /health twice a second, and every --tear-every
seconds writes a torn message (an empty payload) into the broker's queue, which makes the worker stop
and scripts/supervise.py start it again. At the end it waits for every acknowledged bid to be judged and
prints: worker restarts, jobs enqueued, jobs done, answers by status, /health failures.
"""

from __future__ import annotations

import argparse
import contextlib
import json
import os
import sqlite3
import sys
import tempfile
import threading
import time
import uuid
from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path

import httpx

ROOT = Path(__file__).resolve().parents[1]
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))

from tools.load import Load, market  # noqa: E402
from tools.nodes import Server, run_shape, wait_until  # noqa: E402


class RunStack:
    """What tools/load.py's Load and market() need from a stack: HTTPS clients."""

    def __init__(self, server: Server):
        self.server = server

    def client(self, token: str | None = None, timeout: float = 10) -> httpx.Client:
        headers = {"Authorization": f"Bearer {token}"} if token else {}
        return httpx.Client(base_url=self.server.base_url, verify=False, timeout=timeout, headers=headers)  # noqa: S501 (self-signed)


@dataclass
class Report:
    seconds: float = 0.0
    worker_restarts: int = 0
    torn_messages: int = 0
    jobs_enqueued: int = 0
    jobs_done: int = 0
    answers: dict = field(default_factory=dict)
    health_failures: int = 0
    health_polls: int = 0

    @property
    def jobs_lost(self) -> int:
        return self.jobs_enqueued - self.jobs_done

    @property
    def server_errors(self) -> int:
        return sum(n for status, n in self.answers.items() if status == 0 or status >= 500)

    def line(self) -> str:
        return json.dumps({**self.__dict__, "jobs_lost": self.jobs_lost, "server_errors": self.server_errors})


def _db(var_dir: Path) -> sqlite3.Connection:
    return sqlite3.connect(var_dir / "db.sqlite3", timeout=30)


def judged(var_dir: Path, bids: list[str]) -> int:
    """How many of `bids` have their judgement completed (the demo agent's own bids on the same tasks are
    judged too, and are not the load's)."""
    ids = [uuid.UUID(bid).hex for bid in bids]  # SQLite keeps a UUIDField as 32 hex characters
    with contextlib.closing(_db(var_dir)) as conn:
        done = 0
        for start in range(0, len(ids), 500):  # under SQLite's limit of bound parameters
            chunk = ids[start : start + 500]
            marks = ",".join("?" * len(chunk))
            query = f"SELECT count(*) FROM tasks_market_bidjudgement WHERE status = 'completed' AND bid_id IN ({marks})"  # noqa: S608
            done += conn.execute(query, chunk).fetchone()[0]
        return done


def tear_a_message(var_dir: Path) -> None:
    """An empty message on the worker's queue: what a torn write would leave (the transport never does)."""
    with contextlib.closing(sqlite3.connect(var_dir / "celery-broker.sqlite3", timeout=30)) as conn, conn:
        queue_id = conn.execute("SELECT id FROM kombu_queue WHERE name = 'celery'").fetchone()[0]
        conn.execute(
            # No timestamp: first in the reader's order (as kombu's own restored messages are).
            "INSERT INTO kombu_message (visible, payload, version, queue_id) VALUES (1, '', 1, ?)",
            (queue_id,),
        )


def worker_restarts(server: Server) -> int:
    return server.log_text().count("supervise: worker started") - 1


def soak(server: Server, *, seconds: float, tear_every: float, first_tear: float = 10, pause: float = 0.2) -> Report:
    stack = RunStack(server)
    load = Load(stack, market(stack), writers=2, readers=2, pause=pause)
    report = Report()
    stop = threading.Event()

    def watch_health() -> None:
        with stack.client(timeout=5) as client:
            while not stop.is_set():
                try:
                    ok = client.get("/health").status_code == 200
                except httpx.HTTPError:
                    ok = False
                report.health_polls += 1
                report.health_failures += not ok
                stop.wait(0.5)

    watcher = threading.Thread(target=watch_health, daemon=True)
    watcher.start()
    started = time.monotonic()
    load.start()
    next_tear = started + first_tear
    try:
        while (now := time.monotonic()) < started + seconds:
            if tear_every and now >= next_tear:
                tear_a_message(server.var_dir)
                report.torn_messages += 1
                next_tear += tear_every
            time.sleep(min(1.0, max(0.05, started + seconds - now)))
    finally:
        load.stop()
    report.jobs_enqueued = len(load.bids)
    # Every acknowledged bid's judge job must run (the worker restarted in between): bounded, not slept.
    with contextlib.suppress(AssertionError):
        wait_until(lambda: judged(server.var_dir, load.bids) >= report.jobs_enqueued, "every judge job to run", 90, 0.5)
    stop.set()
    watcher.join(timeout=10)
    report.seconds = round(time.monotonic() - started, 1)
    report.jobs_done = judged(server.var_dir, load.bids)
    report.answers = dict(sorted(Counter(a.status for a in load.answers).items()))
    report.worker_restarts = worker_restarts(server)
    return report


def main(argv: list[str]) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--minutes", type=float, default=30)
    parser.add_argument("--tear-every", type=float, default=300, help="seconds between torn messages; 0: none")
    args = parser.parse_args(argv)
    workdir = Path(tempfile.mkdtemp(prefix="soak-"))
    # The load logs in once: its access tokens must outlive the soak (they expire after 15 minutes).
    os.environ["JWT_ACCESS_MINUTES"] = str(int(args.minutes) + 10)
    with run_shape(workdir) as server:
        print(f"soak: make run on {server.base_url}, log {server.log_path}, {args.minutes:g} minutes", flush=True)
        report = soak(server, seconds=args.minutes * 60, tear_every=args.tear_every)
    print(report.line())
    return 0 if report.jobs_lost == 0 and report.server_errors == 0 and report.health_failures == 0 else 1


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
