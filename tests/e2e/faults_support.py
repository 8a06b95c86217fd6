"""The production shape (`make serve`) on its own PostgreSQL and Redis, for the fault tests to break.

`production_stack()` starts a PostgreSQL and a persistent Redis that the test can stop and start again
(scripts/testenv.py), then `make serve` in its own process group on a free port with its own VAR_DIR, and
stops all of it at the end. `Load` drives the API from a few threads and records every answer.
"""

from __future__ import annotations

import contextlib
import os
import secrets
import signal
import subprocess
import time
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import httpx
import psycopg

# The load and the node's processes, shared with scripts/soak.py (tools/); the fault tests import them from here.
from tools.load import PASSWORD as PASSWORD
from tools.load import Load as Load
from tools.load import bid_body as bid_body
from tools.load import by_op as by_op
from tools.load import market as market
from tools.load import statuses as statuses
from tools.load import task_body as task_body
from tools.nodes import ROOT, free_port, testenv, wait_until
from tools.nodes import processes_of as _processes_of


@dataclass
class Stack:
    postgres: testenv.PostgresServer
    redis: testenv.RedisServer
    base: str
    var_dir: Path
    log: Path
    process: subprocess.Popen

    def client(self, token: str | None = None, timeout: float = 10) -> httpx.Client:
        headers = {"Authorization": f"Bearer {token}"} if token else {}
        return httpx.Client(base_url=self.base, verify=False, timeout=timeout, headers=headers)

    def sql(self, query: str, *params) -> list[tuple]:
        """A query on the server's database (what the API cannot show: queue effects, counts)."""
        with psycopg.connect(self.postgres.url, autocommit=True, connect_timeout=5) as conn:
            cursor = conn.execute(query, params)
            return cursor.fetchall() if cursor.description else []

    def health(self) -> int:
        try:
            return self.client(timeout=10).get("/health").status_code
        except httpx.HTTPError:
            return 0

    def log_text(self) -> str:
        return self.log.read_text(errors="replace")

    def worker_processes(self) -> tuple[int, list[int]]:
        """(the Celery worker's main pid, its pool children's pids)."""
        mine = _processes_of(self.var_dir)
        # The supervisor's command line names its children ("worker:restart ... celery ... worker"): not it.
        workers = {pid for pid, cmd in mine.items() if " worker " in cmd and "supervise.py" not in cmd}
        main = [pid for pid in workers if _ppid(pid) not in workers]
        assert len(main) == 1, mine
        children = [pid for pid in mine if _ppid(pid) == main[0]]
        return main[0], children


def _ppid(pid: int) -> int:
    try:
        stat = Path(f"/proc/{pid}/stat").read_text()
    except OSError:
        return -1
    return int(stat.rsplit(")", 1)[1].split()[1])


def _stop_serve(process: subprocess.Popen, var_dir: Path) -> None:
    with contextlib.suppress(ProcessLookupError):
        os.killpg(process.pid, signal.SIGTERM)  # make and serve.sh: its trap stops gunicorn, worker, beat
    try:
        process.wait(timeout=30)
    except subprocess.TimeoutExpired:
        with contextlib.suppress(ProcessLookupError):
            os.killpg(process.pid, signal.SIGKILL)
        process.wait()
    deadline = time.monotonic() + 15
    while (left := _processes_of(var_dir)) and time.monotonic() < deadline:
        time.sleep(0.2)
    for pid in left:  # whatever did not stop by itself (each started by this stack, found by its VAR_DIR)
        with contextlib.suppress(ProcessLookupError):
            os.kill(pid, signal.SIGKILL)


@contextlib.contextmanager
def production_stack(tmp_path: Path, *, celery_concurrency: int = 1, **env: str) -> Iterator[Stack]:
    postgres = testenv.PostgresServer()
    redis = testenv.RedisServer(persistent=True)
    process = None
    var_dir = tmp_path / "var"
    var_dir.mkdir()
    log = tmp_path / "serve.log"
    try:
        postgres.start()
        postgres_admin = postgres.url.rsplit("/", 1)[0] + "/postgres"
        with psycopg.connect(postgres_admin, autocommit=True) as conn:
            conn.execute("CREATE DATABASE brandmarket")
        redis.start()
        port = free_port()
        # As an operator's shell would have it: none of the test run's settings (pytest sets some).
        server_env = {key: os.environ[key] for key in ("PATH", "HOME", "LANG", "LC_ALL", "TMPDIR") if key in os.environ}
        server_env.update(
            DATABASE_URL=postgres.url,
            REDIS_URL=redis.url,
            DJANGO_SECRET_KEY=secrets.token_urlsafe(50),
            # The local payment provider in production settings, on purpose (docs/operations.md#payments-in-production).
            PAYMENTS_ALLOW_LOCAL_PROVIDER_IN_PRODUCTION="true",
            IMAGES_ALLOW_LOCAL_PROVIDER_IN_PRODUCTION="true",
            PUBLISHING_ALLOW_LOCAL_PROVIDER_IN_PRODUCTION="true",
            SOCIAL_OAUTH_ALLOW_LOCAL_PROVIDER_IN_PRODUCTION="true",
            SEO_ALLOW_LOCAL_PROVIDER_IN_PRODUCTION="true",
            VAR_DIR=str(var_dir),
            WEB_CONCURRENCY="2",
            CELERY_CONCURRENCY=str(celery_concurrency),
            LOG_LEVEL="INFO",
            **env,
        )
        # The run's migrated database (scripts/testenv.py): the release step has nothing to apply. These tests stop
        # and break the stack; tests/e2e's `serve` shape is the one whose release migrates an empty database.
        testenv.migrated_postgres(postgres.url, server_env)
        with log.open("wb") as out:
            process = subprocess.Popen(
                ["make", "--no-print-directory", "serve", "HOST=127.0.0.1", f"PORT={port}"],
                cwd=ROOT,
                env=server_env,
                stdout=out,
                stderr=subprocess.STDOUT,
                stdin=subprocess.DEVNULL,
                start_new_session=True,
            )
        stack = Stack(postgres, redis, f"https://127.0.0.1:{port}", var_dir, log, process)

        def up() -> bool:
            assert process.poll() is None, f"make serve stopped:\n{stack.log_text()[-4000:]}"
            return stack.health() == 200

        wait_until(up, "make serve to answer /health", timeout=120, interval=0.5)
        # Lift the rate limit for the load's address, as staff would in the admin (core.RateLimitOverride).
        stack.sql(
            'INSERT INTO core_ratelimitoverride (network, rule, "limit", reason, created_at, updated_at) '
            "VALUES ('127.0.0.1/32', '*', 1000000, 'fault tests', now(), now())"
        )
        yield stack
    finally:
        if process is not None:
            _stop_serve(process, var_dir)
        redis.remove()
        postgres.remove()
