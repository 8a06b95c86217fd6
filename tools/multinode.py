"""`make serve` nodes behind HAProxy: the pieces of scripts/multinode.py's cluster, which
tests/e2e/test_multinode_cluster.py starts too.

`Node` is scripts/serve.sh (the `make serve` entry point, which execs scripts/supervise.py) started in a
session of its own with its own VAR_DIR; `Proxy` is HAProxy running docs/haproxy.cfg with the addresses
of this machine; `Load` is a steady mix of reads and writes (with an Idempotency-Key or, for some clients,
without) through the proxy that records every answer. Everything started here is stopped by its `stop()`,
whatever state it is in.
"""

from __future__ import annotations

import contextlib
import csv
import io
import os
import re
import signal
import socket
import subprocess
import threading
import time
import uuid
from collections import Counter
from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta
from pathlib import Path

import httpx

from tools.nodes import ROOT, free_port, processes_of, wait_until

FORWARDED_HTTPS = {"X-Forwarded-Proto": "https"}


def node_env(base: dict[str, str], var_dir: Path, port: int, roles: str, host: str = "127.0.0.1") -> dict[str, str]:
    return {**base, "VAR_DIR": str(var_dir), "HOST": host, "PORT": str(port), "SERVE_ROLES": roles}


@dataclass
class Node:
    name: str
    env: dict[str, str]
    var_dir: Path
    port: int
    log: Path
    process: subprocess.Popen | None = None
    host: str = "127.0.0.1"

    @property
    def address(self) -> str:
        return f"{self.host}:{self.port}"

    def start(self) -> None:
        with self.log.open("ab") as out:
            self.process = subprocess.Popen(  # noqa: S603 (scripts/serve.sh)
                [str(ROOT / "scripts" / "serve.sh")],
                cwd=ROOT,
                env=self.env,
                stdout=out,
                stderr=subprocess.STDOUT,
                stdin=subprocess.DEVNULL,
                start_new_session=True,
            )

    def health(self) -> int:
        """/health straight at the node, forwarded as https by a trusted proxy (this machine)."""
        try:
            return httpx.get(f"http://{self.address}/health", headers=FORWARDED_HTTPS, timeout=5).status_code
        except httpx.HTTPError:
            return 0

    def wait_ready(self, timeout: float = 120) -> None:
        def ready() -> bool:
            assert self.process.poll() is None, f"{self.name} exited:\n{self.log_tail()}"
            return self.health() == 200

        wait_until(ready, f"{self.name} to answer /health with 200", timeout, 0.25)

    def terminate(self) -> float:
        """A plain SIGTERM to the entry point (scripts/supervise.py, which serve.sh execs); when it was sent."""
        os.kill(self.process.pid, signal.SIGTERM)
        return time.monotonic()

    def kill(self) -> float:
        """SIGKILL to every process of the node (found by its VAR_DIR), as when its machine dies; when."""
        at = time.monotonic()
        # SIGSTOP first: a child must not see its parent die (PR_SET_PDEATHSIG sends it SIGTERM) and stop
        # cleanly (a beat releasing its lock) before its own SIGKILL.
        pids = processes_of(self.var_dir)
        for sig in (signal.SIGSTOP, signal.SIGKILL):
            for pid in pids:
                with contextlib.suppress(ProcessLookupError):
                    os.kill(pid, sig)
        with contextlib.suppress(subprocess.TimeoutExpired):
            self.process.wait(timeout=10)
        return at

    def running(self) -> bool:
        return self.process is not None and self.process.poll() is None

    def db_connections_line(self) -> str:
        lines = [line for line in self.log_text().splitlines() if line.startswith("DB:")]
        return lines[-1] if lines else "(no DB line)"

    def log_text(self) -> str:
        try:
            return self.log.read_text(errors="replace")
        except OSError:
            return ""

    def log_tail(self, lines: int = 60) -> str:
        return "\n".join(self.log_text().splitlines()[-lines:])

    def stop(self) -> None:
        """Whatever is left: SIGTERM, then SIGKILL to its group and to every process with its VAR_DIR."""
        if self.process is not None and self.process.poll() is None:
            with contextlib.suppress(ProcessLookupError):
                os.kill(self.process.pid, signal.SIGTERM)
            with contextlib.suppress(subprocess.TimeoutExpired):
                self.process.wait(timeout=45)
            with contextlib.suppress(ProcessLookupError):
                os.killpg(self.process.pid, signal.SIGKILL)
            with contextlib.suppress(subprocess.TimeoutExpired):
                self.process.wait(timeout=10)
        for pid in processes_of(self.var_dir):
            with contextlib.suppress(ProcessLookupError):
                os.kill(pid, signal.SIGKILL)


def proxy_config(template: str, *, bind: str, servers: dict[str, str], stats_socket: Path) -> str:
    """docs/haproxy.cfg for this machine: plain HTTP on `bind`, these server addresses, this socket."""
    out = []
    for line in template.splitlines():
        stripped = line.strip()
        indent = line[: len(line) - len(line.lstrip())]
        if stripped.startswith("bind "):
            line = f"{indent}bind {bind}"
        elif stripped.startswith("stats socket "):
            line = f"{indent}stats socket {stats_socket} mode 600 level admin"
        elif match := re.match(r"server (\S+) \S+ (.*)", stripped):
            line = f"{indent}server {match[1]} {servers[match[1]]} {match[2]}"
        out.append(line)
    return "\n".join(out) + "\n"


@dataclass
class Proxy:
    binary: str
    config: Path
    stats_socket: Path
    port: int
    log: Path
    process: subprocess.Popen | None = None

    @property
    def base(self) -> str:
        return f"http://127.0.0.1:{self.port}"

    def start(self) -> None:
        check = subprocess.run([self.binary, "-c", "-f", str(self.config)], capture_output=True, text=True)  # noqa: S603 (haproxy)
        assert check.returncode == 0, check.stdout + check.stderr
        with self.log.open("ab") as out:
            self.process = subprocess.Popen(  # noqa: S603 (Debian's haproxy)
                [self.binary, "-db", "-f", str(self.config)],
                stdout=out,
                stderr=subprocess.STDOUT,
                stdin=subprocess.DEVNULL,
                start_new_session=True,
            )
        wait_until(self.stats_socket.exists, "HAProxy's stats socket", 15, 0.05)

    def server_states(self) -> dict[str, str]:
        """{server: 'UP' | 'DOWN' | 'UP 1/2' ...} from `show stat` on the stats socket."""
        return {row["svname"]: row["status"] for row in self.stats() if row["svname"] not in ("FRONTEND", "BACKEND")}

    def retries(self) -> str:
        """What the proxy hid from clients: the backend's retries (wretr) and redispatches (wredis)."""
        backend = next(row for row in self.stats() if row["svname"] == "BACKEND")
        return f"proxy retries={backend['wretr']} redispatches={backend['wredis']}"

    def stats(self) -> list[dict[str, str]]:
        assert self.process.poll() is None, f"HAProxy exited:\n{self.log.read_text(errors='replace')[-3000:]}"
        with socket.socket(socket.AF_UNIX) as sock:
            sock.settimeout(5)
            sock.connect(str(self.stats_socket))
            sock.sendall(b"show stat\n")
            data = b""
            while chunk := sock.recv(65536):
                data += chunk
        return list(csv.DictReader(io.StringIO(data.decode().lstrip("# "))))

    def set_state(self, server: str, state: str) -> None:
        """`set server` on the stats socket: "drain" (no new requests) or "ready" (back in the rotation)."""
        with socket.socket(socket.AF_UNIX) as sock:
            sock.settimeout(5)
            sock.connect(str(self.stats_socket))
            sock.sendall(f"set server web/{server} state {state}\n".encode())
            answer = sock.recv(4096).decode().strip()
        assert answer == "", answer  # HAProxy says nothing when it did it

    def wait_state(self, server: str, state: str, timeout: float = 30) -> None:
        wait_until(lambda: self.server_states().get(server) == state, f"HAProxy to see {server} {state}", timeout, 0.1)

    def stop(self) -> None:
        if self.process is None:
            return
        with contextlib.suppress(ProcessLookupError):
            os.killpg(self.process.pid, signal.SIGTERM)
        try:
            self.process.wait(timeout=10)
        except subprocess.TimeoutExpired:
            with contextlib.suppress(ProcessLookupError):
                os.killpg(self.process.pid, signal.SIGKILL)
            self.process.wait(timeout=10)


def task_body(title: str) -> dict:
    return {
        "title": title,
        "description": "Announce the new analytics dashboard to marketing teams; friendly tone.",
        "budget_amount": "200.00",
        "budget_currency": "usd",
        "deadline": (datetime.now(UTC) + timedelta(days=7)).isoformat(),
        "category": "content",
        "requirements": ["Under 300 words", "Mention the free trial"],
    }


@dataclass
class Answer:
    at: float  # monotonic, when the request was sent
    op: str
    status: int | str  # an HTTP status, or "error:<exception>" when no answer came
    done: float = 0.0  # monotonic, when the answer (or the error) came


@dataclass
class Load:
    """`threads` clients through the proxy, each a GET of open tasks then a POST of a new task (its own
    Idempotency-Key and title) in a loop, until stopped, `max_requests` were sent or `max_seconds` passed.
    With `retries`, a POST that got no answer or a 5xx is sent again with the same key and body (recorded
    as op "POST retry"), as a client of the API should; `titles` maps each key to its task's title.
    The first `unkeyed` clients send their POSTs without a key (op "POST unkeyed") and never send one
    again: they cannot tell whether a POST that got no answer was applied. `outcomes` maps the title of
    every POST, of either kind, to what its last attempt got."""

    base: str
    token: str
    threads: int = 3
    pause: float = 0.03
    max_requests: int = 40_000
    max_seconds: float = 600
    answers: list[Answer] = field(default_factory=list)
    created: dict[str, float] = field(default_factory=dict)  # acknowledged task id -> when sent
    retries: int = 0
    titles: dict[str, str] = field(default_factory=dict)  # Idempotency-Key -> title
    bodies: dict[str, dict] = field(default_factory=dict)  # Idempotency-Key -> the body sent with it
    unacknowledged: list[str] = field(default_factory=list)  # keys whose every attempt failed
    unkeyed: int = 0
    outcomes: dict[str, int | str] = field(default_factory=dict)  # title -> its last status, or "error:..."
    _stop: threading.Event = field(default_factory=threading.Event)
    _lock: threading.Lock = field(default_factory=threading.Lock)
    _workers: list[threading.Thread] = field(default_factory=list)

    def _call(self, client: httpx.Client, op: str, method: str, path: str, **kwargs) -> httpx.Response | None:
        return self._send(client, op, method, path, **kwargs)[0]

    def _send(
        self, client: httpx.Client, op: str, method: str, path: str, **kwargs
    ) -> tuple[httpx.Response | None, Answer]:
        at = time.monotonic()
        try:
            response = client.request(method, path, **kwargs)
        except httpx.HTTPError as exc:
            status, response = f"error:{type(exc).__name__}", None
        else:
            status = response.status_code
        answer = Answer(at, op, status, time.monotonic())
        with self._lock:
            self.answers.append(answer)
        return response, answer

    def _run(self, n: int) -> None:
        deadline = time.monotonic() + self.max_seconds
        with httpx.Client(base_url=self.base, headers=self._headers(), timeout=40) as client:
            while not self._stop.is_set() and time.monotonic() < deadline and len(self.answers) < self.max_requests:
                self._call(client, "GET", "GET", "/api/v1/tasks", params={"scope": "open", "limit": 10})
                if n < self.unkeyed:
                    self._post_unkeyed(client, f"Unkeyed copy {n}-{uuid.uuid4().hex[:13]}")
                    self._stop.wait(self.pause)
                    continue
                key = str(uuid.uuid4())
                self._post_keyed(client, key, f"Rolling restart copy {n}-{key[:13]}")
                self._stop.wait(self.pause)

    def post_one(self, title: str, *, keyed: bool, headers: dict[str, str]) -> None:
        """One more POST of either kind, on a connection of its own with these headers."""
        with httpx.Client(base_url=self.base, headers=self._headers(headers), timeout=40) as client:
            if keyed:
                self._post_keyed(client, str(uuid.uuid4()), title)
            else:
                self._post_unkeyed(client, title)

    def _headers(self, extra: dict[str, str] | None = None) -> dict[str, str]:
        return {"Authorization": f"Bearer {self.token}", **(extra or {})}

    def _post_keyed(self, client: httpx.Client, key: str, title: str) -> None:
        body = task_body(title)
        with self._lock:
            self.titles[key] = title
            self.bodies[key] = body
        sent = time.monotonic()
        for attempt in range(self.retries + 1):
            op = "POST retry" if attempt else "POST"
            response, answer = self._send(
                client, op, "POST", "/api/v1/tasks", json=body, headers={"Idempotency-Key": key}
            )
            if response is not None and response.status_code < 500:
                break
            self._stop.wait(0.2 * (attempt + 1))
        with self._lock:
            self.outcomes[title] = answer.status
            if answer.status == 201:
                self.created[response.json()["id"]] = sent
            elif response is None or response.status_code >= 500:
                self.unacknowledged.append(key)

    def _post_unkeyed(self, client: httpx.Client, title: str) -> None:
        response, answer = self._send(client, "POST unkeyed", "POST", "/api/v1/tasks", json=task_body(title))
        with self._lock:
            self.outcomes[title] = answer.status
            if answer.status == 201:
                self.created[response.json()["id"]] = answer.at

    def start(self) -> Load:
        self._workers = [threading.Thread(target=self._run, args=(n,), daemon=True) for n in range(self.threads)]
        for worker in self._workers:
            worker.start()
        return self

    def stop(self) -> None:
        self._stop.set()
        for worker in self._workers:
            worker.join(timeout=60)

    def window(self, start: float, end: float) -> tuple[list[Answer], list[str]]:
        """The answers to requests sent in [start, end), and the tasks acknowledged among them."""
        with self._lock:
            answers = [a for a in self.answers if start <= a.at < end]
            created = [task for task, at in self.created.items() if start <= at < end]
        return answers, created


def failures(answers: list[Answer]) -> list[Answer]:
    return [a for a in answers if not isinstance(a.status, int) or a.status >= 500]


def status_counts(answers: list[Answer]) -> str:
    counts = Counter(f"{a.op} {a.status}" for a in answers)
    return " ".join(f"{k}x{v}" for k, v in sorted(counts.items()))


__all__ = [
    "Answer",
    "Load",
    "Node",
    "Proxy",
    "failures",
    "free_port",
    "node_env",
    "proxy_config",
    "status_counts",
    "task_body",
]
