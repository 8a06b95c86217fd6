"""The production shape (`make serve`) on its own PostgreSQL and Redis, for the fault tests to break.

`production_stack()` starts a PostgreSQL and a persistent Redis that the test can stop and start again
(scripts/testenv.py), then `make serve` in its own process group on a free port with its own VAR_DIR, and
stops all of it at the end. `Load` drives the API from a few threads and records every answer.
"""

from __future__ import annotations

import contextlib
import importlib.util
import os
import secrets
import signal
import socket
import subprocess
import threading
import time
import uuid
from collections import Counter
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta
from pathlib import Path

import httpx
import psycopg

ROOT = Path(__file__).resolve().parents[2]
_spec = importlib.util.spec_from_file_location("testenv", ROOT / "scripts" / "testenv.py")
testenv = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(testenv)

PASSWORD = "correct horse battery staple 42"
# Agents must have a public https endpoint in production (the SSRF guard resolves it); an address literal
# needs no DNS. Nothing here ever calls it: no test runs a benchmark or a dispatch.
AGENT_URL = "https://93.184.215.14/hook"


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


def wait_until(condition: Callable[[], object], what: str, timeout: float, interval: float = 0.25):
    deadline = time.monotonic() + timeout
    while True:
        result = condition()
        if result:
            return result
        if time.monotonic() > deadline:
            raise AssertionError(f"timed out after {timeout:.0f} s waiting for {what}")
        time.sleep(interval)


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


def _processes_of(var_dir: Path) -> dict[int, str]:
    """Our own processes: those whose environment carries this stack's VAR_DIR (it is unique per test)."""
    marker = f"VAR_DIR={var_dir}".encode()
    found = {}
    for entry in os.listdir("/proc"):
        if not entry.isdigit() or int(entry) == os.getpid():
            continue
        try:
            environ = Path(f"/proc/{entry}/environ").read_bytes()
            cmdline = Path(f"/proc/{entry}/cmdline").read_bytes().replace(b"\0", b" ").decode(errors="replace")
        except OSError:
            continue
        if marker in environ.split(b"\0"):
            found[int(entry)] = f" {cmdline} "
    return found


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
            VAR_DIR=str(var_dir),
            WEB_CONCURRENCY="2",
            CELERY_CONCURRENCY=str(celery_concurrency),
            LOG_LEVEL="INFO",
            **env,
        )
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


# --- Users and marketplace objects, through the API -------------------------------------------------


def user_token(stack: Stack, name: str) -> str:
    email = f"{name}-{uuid.uuid4().hex[:8]}@example.com"
    with stack.client() as client:
        response = client.post("/api/v1/auth/register", json={"email": email, "password": PASSWORD})
        assert response.status_code == 201, response.text
        response = client.post("/api/v1/auth/token", json={"email": email, "password": PASSWORD})
        assert response.status_code == 200, response.text
        return response.json()["access"]


def task_body(n: int) -> dict:
    return {
        "title": f"Write launch copy for our analytics dashboard #{n}",
        "description": "Announce the new analytics dashboard to marketing teams; friendly tone.",
        "budget_amount": "200.00",
        "budget_currency": "usd",
        "deadline": (datetime.now(UTC) + timedelta(days=7)).isoformat(),
        "category": "content",
        "requirements": ["Under 300 words", "Mention the free trial"],
    }


def bid_body(agent_id: str) -> dict:
    return {
        "agent_id": agent_id,
        "amount": "150.00",
        "currency": "usd",
        "proposal": "Friendly launch copy for the analytics dashboard, with the free trial up front.",
        "eta_hours": 24,
    }


@dataclass
class Market:
    poster: str
    bidder: str
    agent_id: str


def market(stack: Stack) -> Market:
    poster, bidder = user_token(stack, "poster"), user_token(stack, "bidder")
    with stack.client(bidder) as client:
        response = client.post(
            "/api/v1/agents",
            json={"name": "Copybot", "description": "Writes launch copy.", "endpoint_url": AGENT_URL},
        )
        assert response.status_code == 201, response.text
    return Market(poster, bidder, response.json()["id"])


# --- Load ----------------------------------------------------------------------------------------------


@dataclass
class Answer:
    at: float  # monotonic
    op: str
    status: int  # 0: no answer (connection error or timeout)
    seconds: float
    rate_limited_headers: bool
    error: str = ""


@dataclass
class Load:
    """Reader and writer threads against the API until stopped; every answer is recorded.

    A writer posts a task (poster) and bids on it (bidder): the bid's judge job is queued on commit.
    Readers list tasks, a task's bids and the bidder's agents.
    """

    stack: Stack
    market: Market
    writers: int = 2
    readers: int = 2
    pause: float = 0.05
    answers: list[Answer] = field(default_factory=list)
    bids: list[str] = field(default_factory=list)  # acknowledged (201)
    tasks: list[str] = field(default_factory=list)  # acknowledged (201)
    _stop: threading.Event = field(default_factory=threading.Event)
    _lock: threading.Lock = field(default_factory=threading.Lock)
    _threads: list[threading.Thread] = field(default_factory=list)

    def _call(self, client: httpx.Client, op: str, method: str, path: str, **kwargs) -> httpx.Response | None:
        started = time.monotonic()
        try:
            response = client.request(method, path, **kwargs)
        except httpx.HTTPError as exc:
            answer = Answer(started, op, 0, time.monotonic() - started, False, f"{type(exc).__name__}: {exc}")
            response = None
        else:
            answer = Answer(
                started, op, response.status_code, time.monotonic() - started, "X-RateLimit-Limit" in response.headers
            )
            if response.status_code >= 500:
                answer.error = response.text[:300]
        with self._lock:
            self.answers.append(answer)
        return response

    def _writer(self, n: int) -> None:
        with self.stack.client(self.market.poster) as poster, self.stack.client(self.market.bidder) as bidder:
            i = 0
            while not self._stop.is_set():
                i += 1
                response = self._call(poster, "create task", "POST", "/api/v1/tasks", json=task_body(n * 10000 + i))
                if response is not None and response.status_code == 201:
                    task_id = response.json()["id"]
                    with self._lock:
                        self.tasks.append(task_id)
                    response = self._call(
                        bidder,
                        "create bid",
                        "POST",
                        f"/api/v1/tasks/{task_id}/bids",
                        json=bid_body(self.market.agent_id),
                    )
                    if response is not None and response.status_code == 201:
                        with self._lock:
                            self.bids.append(response.json()["id"])
                self._stop.wait(self.pause)

    def _reader(self, n: int) -> None:
        with self.stack.client(self.market.poster) as poster, self.stack.client(self.market.bidder) as bidder:
            while not self._stop.is_set():
                self._call(poster, "list tasks", "GET", "/api/v1/tasks", params={"limit": 10})
                with self._lock:
                    task_id = self.tasks[-1] if self.tasks else None
                if task_id:
                    self._call(poster, "list bids", "GET", f"/api/v1/tasks/{task_id}/bids")
                self._call(bidder, "list agents", "GET", "/api/v1/agents")
                self._stop.wait(self.pause)

    def start(self) -> Load:
        for n in range(self.writers):
            self._threads.append(threading.Thread(target=self._writer, args=(n,), daemon=True))
        for n in range(self.readers):
            self._threads.append(threading.Thread(target=self._reader, args=(n,), daemon=True))
        for thread in self._threads:
            thread.start()
        return self

    def stop(self) -> None:
        self._stop.set()
        for thread in self._threads:
            thread.join(timeout=30)

    def between(self, start: float, end: float) -> list[Answer]:
        with self._lock:
            return [a for a in self.answers if start <= a.at < end]


def statuses(answers: list[Answer]) -> dict:
    return dict(sorted(Counter(a.status for a in answers).items()))


def by_op(answers: list[Answer]) -> dict:
    out: dict[str, Counter] = {}
    for a in answers:
        out.setdefault(a.op, Counter())[a.status] += 1
    return {op: dict(sorted(c.items())) for op, c in sorted(out.items())}
