"""Real processes for the operations tests: gunicorn web workers and Celery workers on the test database."""

from __future__ import annotations

import os
import socket
import subprocess
import sys
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import httpx
import pytest
from django.db import connection

ROOT = Path(__file__).resolve().parents[2]
PROXY = {"X-Forwarded-Proto": "https"}  # gunicorn speaks HTTP behind the (simulated) TLS proxy on 127.0.0.1


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


def shared_database_url() -> str:
    """The database pytest-django created for this run, for processes of our own to share."""
    s = connection.settings_dict
    auth = s["USER"] + (f":{s['PASSWORD']}" if s["PASSWORD"] else "")
    return f"postgres://{auth}@{s['HOST']}:{s['PORT']}/{s['NAME']}"


def process_env(settings_module: str, **extra: str) -> dict[str, str]:
    return {**os.environ, "DJANGO_SETTINGS_MODULE": settings_module, "DATABASE_URL": shared_database_url(), **extra}


def stop(process: subprocess.Popen, timeout: float = 20) -> None:
    """Stop a process we started: TERM, then KILL."""
    if process.poll() is None:
        process.terminate()
        try:
            process.wait(timeout=timeout)
        except subprocess.TimeoutExpired:
            process.kill()
            process.wait()


class Output:
    """A started process's stdout and stderr, in a file (a pipe nobody reads would block it)."""

    def __init__(self, path: Path):
        self.path = path
        self.file = path.open("wb")

    def text(self) -> str:
        self.file.flush()
        return self.path.read_text(errors="replace")


@contextmanager
def gunicorn(
    tmp_path: Path,
    *,
    workers: int,
    threads: int = 2,
    trusted_proxies: str = "127.0.0.1/32",
    worker_class: str = "",  # config/gunicorn.py's default
) -> Iterator[tuple[str, subprocess.Popen, Output]]:
    """`make serve`'s web server (config/gunicorn.py) on production settings, behind a simulated TLS proxy."""
    port = free_port()
    env = process_env(
        "config.settings.production",
        OUTBOUND_ALLOW_PRIVATE_URLS="false",
        TRUSTED_PROXIES=trusted_proxies,
        GUNICORN_BIND=f"127.0.0.1:{port}",
        WEB_CONCURRENCY=str(workers),
        GUNICORN_THREADS=str(threads),
        GUNICORN_WORKER_CLASS=worker_class,
        GUNICORN_ACCESS_LOG="1",
        LOG_LEVEL="INFO",
    )
    output = Output(tmp_path / "gunicorn.log")
    process = subprocess.Popen(
        [sys.executable, "-m", "gunicorn", "-c", "config/gunicorn.py", "config.wsgi:application"],
        cwd=ROOT,
        env=env,
        stdout=output.file,
        stderr=subprocess.STDOUT,
    )
    base = f"http://127.0.0.1:{port}"
    try:
        deadline = time.monotonic() + 60
        while True:
            assert process.poll() is None, output.text()
            try:
                httpx.get(f"{base}/health", headers=PROXY, timeout=2)
                break  # it answers
            except httpx.HTTPError:
                pass
            assert time.monotonic() < deadline, "gunicorn did not come up"
            time.sleep(0.2)
        yield base, process, output
    finally:
        stop(process)


@pytest.fixture(scope="session")
def observed_node():
    """A `make serve` node with metrics and traces on (tests/ops/observed_node.py), for the observability tests."""
    from tests.ops.observed_node import start_observed_node

    with start_observed_node() as node:
        yield node
