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


def wait_for_port(port: int, what: str, timeout: float = 30) -> None:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        with socket.socket() as sock:
            if sock.connect_ex(("127.0.0.1", port)) == 0:
                return
        time.sleep(0.1)
    raise RuntimeError(f"{what} did not start listening on port {port}")


@contextmanager
def postgres():
    bindir = postgres_bindir()
    if bindir is None:
        apt_install("postgresql")
        bindir = postgres_bindir()
    workdir = tempfile.mkdtemp(prefix="testenv-pg-")
    data, sockets, logfile = f"{workdir}/data", f"{workdir}/sock", f"{workdir}/postgres.log"
    os.makedirs(sockets)
    # PostgreSQL refuses to run as root: run it as the `postgres` user the Debian package creates.
    as_user: list[str] = ["runuser", "-u", "postgres", "--"] if is_root() else []
    if is_root():
        shutil.chown(workdir, "postgres")
        shutil.chown(sockets, "postgres")
    port = free_port()

    def pg(*args: str) -> None:
        subprocess.run([*as_user, *args], check=True, stdout=subprocess.DEVNULL, stdin=subprocess.DEVNULL)

    pg(f"{bindir}/initdb", "-D", data, "-U", "postgres", "--auth=trust", "-E", "UTF8", "--no-sync")
    options = (
        f"-p {port} -k {sockets} -c listen_addresses=127.0.0.1 -c fsync=off -c synchronous_commit=off "
        "-c full_page_writes=off -c max_connections=200"
    )
    pg(f"{bindir}/pg_ctl", "-D", data, "-o", options, "-l", logfile, "-w", "start")
    log(f"PostgreSQL on 127.0.0.1:{port}")
    try:
        yield f"postgres://postgres@127.0.0.1:{port}/brandmarket"
    finally:
        subprocess.run(
            [*as_user, f"{bindir}/pg_ctl", "-D", data, "-m", "immediate", "-w", "stop"],
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
            check=False,
        )
        shutil.rmtree(workdir, ignore_errors=True)


@contextmanager
def redis():
    server = shutil.which("redis-server")
    if server is None:
        apt_install("redis-server")
        server = shutil.which("redis-server") or "/usr/bin/redis-server"
    port = free_port()
    workdir = tempfile.mkdtemp(prefix="testenv-redis-")
    process = subprocess.Popen(
        [server, "--port", str(port), "--bind", "127.0.0.1", "--save", "", "--appendonly", "no", "--dir", workdir],
        stdout=subprocess.DEVNULL,
        stdin=subprocess.DEVNULL,
    )
    try:
        wait_for_port(port, "redis-server")
        log(f"Redis on 127.0.0.1:{port}")
        yield f"redis://127.0.0.1:{port}/0"
    finally:
        process.terminate()
        try:
            process.wait(timeout=10)
        except subprocess.TimeoutExpired:
            process.kill()
        shutil.rmtree(workdir, ignore_errors=True)


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
