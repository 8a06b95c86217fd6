#!/usr/bin/env python3
"""Run a command against throw-away PostgreSQL and Redis servers, then stop them.

    scripts/testenv.py -- .venv/bin/python -m pytest

Unless DATABASE_URL / REDIS_URL are already set, this installs the Debian packages when they are
missing (as root, with apt-get), starts each server on a free loopback port in a temporary
directory, exports the URLs to the command, and removes everything afterwards. The exit status
is the command's.
"""

from __future__ import annotations

import glob
import os
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import time
from contextlib import ExitStack, contextmanager
from pathlib import Path


def log(message: str) -> None:
    print(f"[testenv] {message}", flush=True)


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


def is_root() -> bool:
    return os.geteuid() == 0


def apt_install(*packages: str) -> None:
    if not is_root():
        sys.exit(f"[testenv] missing {' '.join(packages)}: install them, or set DATABASE_URL/REDIS_URL")
    log(f"installing {' '.join(packages)} with apt-get")
    env = {**os.environ, "DEBIAN_FRONTEND": "noninteractive"}
    subprocess.run(["apt-get", "update", "-qq"], check=True, env=env, stdin=subprocess.DEVNULL)
    subprocess.run(
        ["apt-get", "install", "-y", "-qq", "--no-install-recommends", *packages],
        check=True,
        env=env,
        stdin=subprocess.DEVNULL,
    )


def postgres_bindir() -> str | None:
    candidates = sorted(glob.glob("/usr/lib/postgresql/*/bin/initdb"), reverse=True)
    if candidates:
        return str(Path(candidates[0]).parent)
    initdb = shutil.which("initdb")
    return str(Path(initdb).parent) if initdb else None


def haproxy_binary() -> str:
    """HAProxy for the multi-node cluster (scripts/multinode.py, tests/e2e/test_multinode_cluster.py), from
    Debian's package when missing, like PostgreSQL and Redis."""
    found = shutil.which("haproxy") or (os.path.exists("/usr/sbin/haproxy") and "/usr/sbin/haproxy")
    if not found:
        apt_install("haproxy")
        found = shutil.which("haproxy") or "/usr/sbin/haproxy"
    return found


def prometheus_binary() -> str:
    """Prometheus for the metrics test (tests/ops/test_metrics.py), from Debian's package when missing."""
    found = shutil.which("prometheus")
    if not found:
        apt_install("prometheus")
        found = shutil.which("prometheus") or "/usr/bin/prometheus"
    return found


def wait_for_port(port: int, what: str, timeout: float = 30) -> None:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        with socket.socket() as sock:
            if sock.connect_ex(("127.0.0.1", port)) == 0:
                return
        time.sleep(0.1)
    raise RuntimeError(f"{what} did not start listening on port {port}")


class PostgresServer:
    """A throw-away PostgreSQL in a temporary directory, on a fixed free port, that can be stopped and
    started again on the same port and data directory (the fault tests restart it under load)."""

    def __init__(self) -> None:
        bindir = postgres_bindir()
        if bindir is None:
            apt_install("postgresql")
            bindir = postgres_bindir()
        self.bindir = bindir
        self.workdir = tempfile.mkdtemp(prefix="testenv-pg-")
        self.data, sockets, self.logfile = (
            f"{self.workdir}/data",
            f"{self.workdir}/sock",
            f"{self.workdir}/postgres.log",
        )
        os.makedirs(sockets)
        # PostgreSQL refuses to run as root: run it as the `postgres` user the Debian package creates.
        self.as_user: list[str] = ["runuser", "-u", "postgres", "--"] if is_root() else []
        if is_root():
            shutil.chown(self.workdir, "postgres")
            shutil.chown(sockets, "postgres")
        self.port = free_port()
        self.options = (
            f"-p {self.port} -k {sockets} -c listen_addresses=127.0.0.1 -c fsync=off -c synchronous_commit=off "
            "-c full_page_writes=off -c max_connections=200"
        )
        self._pg(f"{self.bindir}/initdb", "-D", self.data, "-U", "postgres", "--auth=trust", "-E", "UTF8", "--no-sync")

    @property
    def url(self) -> str:
        return f"postgres://postgres@127.0.0.1:{self.port}/brandmarket"

    def _pg(self, *args: str, check: bool = True) -> None:
        subprocess.run(
            [*self.as_user, *args],
            check=check,
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
            stdin=subprocess.DEVNULL,
        )

    def start(self) -> None:
        self._pg(f"{self.bindir}/pg_ctl", "-D", self.data, "-o", self.options, "-l", self.logfile, "-w", "start")

    def stop(self, mode: str = "immediate") -> None:
        """`immediate` is a crash as far as clients can tell; `fast` ends sessions and shuts down cleanly."""
        self._pg(f"{self.bindir}/pg_ctl", "-D", self.data, "-m", mode, "-w", "stop", check=False)

    def remove(self) -> None:
        self.stop()
        shutil.rmtree(self.workdir, ignore_errors=True)


@contextmanager
def postgres():
    server = PostgresServer()
    try:
        server.start()
        log(f"PostgreSQL on 127.0.0.1:{server.port}")
        yield server.url
    finally:
        server.remove()


class RedisServer:
    """A throw-away Redis on a fixed free port that can be stopped and started again on the same port.

    With `persistent=True` it keeps its data across a restart (append-only file in its directory, as a
    production broker must); otherwise nothing is written to disk.
    """

    def __init__(self, *, persistent: bool = False) -> None:
        server = shutil.which("redis-server")
        if server is None:
            apt_install("redis-server")
            server = shutil.which("redis-server") or "/usr/bin/redis-server"
        self.server = server
        self.port = free_port()
        self.workdir = tempfile.mkdtemp(prefix="testenv-redis-")
        persistence = ["--appendonly", "yes", "--appendfsync", "always"] if persistent else ["--appendonly", "no"]
        self.args = [server, "--port", str(self.port), "--bind", "127.0.0.1", "--save", "", *persistence]
        self.process: subprocess.Popen | None = None

    @property
    def url(self) -> str:
        return f"redis://127.0.0.1:{self.port}/0"

    def start(self) -> None:
        self.process = subprocess.Popen(
            [*self.args, "--dir", self.workdir], stdout=subprocess.DEVNULL, stdin=subprocess.DEVNULL
        )
        wait_for_port(self.port, "redis-server")

    def stop(self) -> None:
        if self.process is None:
            return
        self.process.terminate()
        try:
            self.process.wait(timeout=10)
        except subprocess.TimeoutExpired:
            self.process.kill()
            self.process.wait()
        self.process = None

    def remove(self) -> None:
        self.stop()
        shutil.rmtree(self.workdir, ignore_errors=True)


@contextmanager
def redis():
    server = RedisServer()
    try:
        server.start()
        log(f"Redis on 127.0.0.1:{server.port}")
        yield server.url
    finally:
        server.remove()


def main(argv: list[str]) -> int:
    if "--" in argv:
        argv = argv[argv.index("--") + 1 :]
    if not argv:
        sys.exit("usage: testenv.py -- COMMAND [ARGS...]")
    env = dict(os.environ)
    with ExitStack() as stack:
        if not env.get("DATABASE_URL"):
            env["DATABASE_URL"] = stack.enter_context(postgres())
        if not env.get("REDIS_URL"):
            env["REDIS_URL"] = stack.enter_context(redis())
        process = subprocess.Popen(argv, env=env)
        try:
            return process.wait()
        except KeyboardInterrupt:
            process.send_signal(signal.SIGINT)
            return process.wait()


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
