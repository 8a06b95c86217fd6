#!/usr/bin/env python3
"""Run a command against throw-away PostgreSQL and Redis servers, then stop them.

    scripts/testenv.py -- .venv/bin/python -m pytest

Unless DATABASE_URL / REDIS_URL are already set, this starts each server on a free loopback port in a
temporary directory, exports the URLs to the command, and removes everything afterwards, also when it is
stopped with Ctrl-C or SIGTERM (which it passes on to the command first). The exit status is the command's.

    scripts/testenv.py --install

installs, in one apt-get run before any test starts, every Debian package the suite uses that is missing
(`SYSTEM_PACKAGES`): `make test` runs it first, so no test worker installs anything while another holds
dpkg's lock. An install that still happens on demand (a script run alone) takes `INSTALL_LOCK` and waits
for dpkg's own lock instead of failing on it.

`migrated_postgres()` / `migrated_sqlite()` give a test's own database the state `migrate` leaves, migrating
once per run and settings module and copying that state afterwards (a dump, a file), where each stack or
subprocess used to run every migration again (about 10 s of CPU each). The command run here gets a
directory for those copies in `MIGRATED_CACHE`, removed afterwards; without it they simply migrate.
"""

from __future__ import annotations

import fcntl
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


# What the suite runs, by the command that must exist and the Debian package that brings it. Node.js and
# npm lint the schema (tools/openapi-lint); Chromium drives the browser tests (never Playwright's download).
SYSTEM_PACKAGES: dict[str, str] = {
    "initdb": "postgresql",
    "redis-server": "redis-server",
    "haproxy": "haproxy",
    "prometheus": "prometheus",
    "chromium": "chromium",
    "chromedriver": "chromium-driver",
    "node": "nodejs",
    "npm": "npm",
}
INSTALL_LOCK = "/var/lock/brandmarket-testenv-apt.lock"
DPKG_LOCK_WAIT = ["-o", "DPkg::Lock::Timeout=600"]  # seconds apt-get waits for another holder of dpkg's lock


def command_exists(name: str) -> bool:
    if name == "initdb":
        return postgres_bindir() is not None
    return bool(shutil.which(name)) or os.path.exists(f"/usr/sbin/{name}")  # haproxy: sbin is not on every PATH


def missing_packages(packages: tuple[str, ...] | None = None) -> list[str]:
    """The packages (of `packages`, default all) whose command is not installed."""
    wanted = set(packages or SYSTEM_PACKAGES.values())
    present = {package for command, package in SYSTEM_PACKAGES.items() if command_exists(command)}
    return sorted(wanted - present)


@contextmanager
def install_lock():
    """One apt-get at a time among this project's processes (xdist workers, scripts run beside a suite)."""
    os.makedirs(os.path.dirname(INSTALL_LOCK), exist_ok=True)
    with open(INSTALL_LOCK, "w") as handle:
        fcntl.flock(handle, fcntl.LOCK_EX)
        try:
            yield
        finally:
            fcntl.flock(handle, fcntl.LOCK_UN)


def apt_install(*packages: str) -> None:
    """Install what of `packages` is still missing once the lock is ours (another process may have
    installed it while this one waited)."""
    if not is_root():
        sys.exit(f"[testenv] missing {' '.join(packages)}: install them, or set DATABASE_URL/REDIS_URL")
    env = {**os.environ, "DEBIAN_FRONTEND": "noninteractive"}
    with install_lock():
        missing = missing_packages(packages)
        if not missing:
            return
        log(f"installing {' '.join(missing)} with apt-get (one run)")
        started = time.monotonic()
        subprocess.run(["apt-get", *DPKG_LOCK_WAIT, "update", "-qq"], check=True, env=env, stdin=subprocess.DEVNULL)
        subprocess.run(
            ["apt-get", *DPKG_LOCK_WAIT, "install", "-y", "-qq", "--no-install-recommends", *missing],
            check=True,
            env=env,
            stdin=subprocess.DEVNULL,
        )
        log(f"installed {' '.join(missing)} in {time.monotonic() - started:.0f} s")


def install_all() -> int:
    """Every missing package of SYSTEM_PACKAGES in one apt-get run; nothing when all are there."""
    missing = missing_packages()
    if missing:
        apt_install(*missing)
    still = missing_packages()
    if still:
        log(f"still missing: {' '.join(still)}")
        return 1
    log("system packages present: " + ", ".join(sorted(set(SYSTEM_PACKAGES.values()))))
    return 0


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


# --- Migrated databases, once per run --------------------------------------------------------------------

ROOT = Path(__file__).resolve().parent.parent


@contextmanager
def _cached(name: str):
    """(path of the cached copy, whether it exists yet), under an exclusive lock; None without a cache."""
    cache = os.environ.get("MIGRATED_CACHE")
    if not cache:
        yield None
        return
    with open(Path(cache) / f"{name}.lock", "a") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        path = Path(cache) / name
        yield path, path.exists()


def _migrate(env: dict[str, str]) -> None:
    subprocess.run(
        [sys.executable, "manage.py", "migrate", "--noinput", "-v0"], cwd=ROOT, env=env, check=True, capture_output=True
    )


def migrated_postgres(database_url: str, env: dict[str, str]) -> None:
    """The empty PostgreSQL database at `database_url`, migrated as `make serve`'s release step would with `env`
    (its settings module, config.settings.production unless `env` names another): the run's first migrates
    and its dump is restored into the later ones (pg_dump, psql)."""
    env = {"DJANGO_SETTINGS_MODULE": "config.settings.production", **env, "DATABASE_URL": database_url}
    key = "postgres-" + env["DJANGO_SETTINGS_MODULE"] + ".sql"
    with _cached(key) as cached:
        if cached is None:
            _migrate(env)
            return
        dump, exists = cached
        bindir = postgres_bindir()
        if not exists:
            _migrate(env)
            made = dump.with_suffix(".part")
            tool = [f"{bindir}/pg_dump", "--no-owner", "--no-privileges", "-f", str(made), database_url]
            subprocess.run(tool, check=True, capture_output=True)
            made.rename(dump)
            return
        tool = [f"{bindir}/psql", "-q", "-X", "-v", "ON_ERROR_STOP=1", "-f", str(dump), database_url]
        subprocess.run(tool, check=True, capture_output=True)


def migrated_sqlite(env: dict[str, str]) -> Path:
    """The embedded default's database (VAR_DIR/db.sqlite3 of `env`, not there yet), migrated as `manage.py
    migrate` with `env` would: the run's first migrates, the later ones get a copy (SQLite's backup API, a
    consistent copy whatever the journal mode). Returns its path."""
    assert not env.get("DATABASE_URL"), "the embedded default: no DATABASE_URL"
    path = Path(env["VAR_DIR"]) / "db.sqlite3"
    path.parent.mkdir(parents=True, exist_ok=True)
    key = "sqlite-" + env.get("DJANGO_SETTINGS_MODULE", "config.settings.local") + ".sqlite3"
    with _cached(key) as cached:
        if cached is None or not cached[1]:
            _migrate(env)
            if cached is not None:
                _sqlite_copy(path, cached[0])
            return path
        _sqlite_copy(cached[0], path)
    return path


def _sqlite_copy(source_path: Path, copy_path: Path) -> None:
    import sqlite3

    source, copy = sqlite3.connect(source_path), sqlite3.connect(copy_path)
    try:
        source.backup(copy)
    finally:
        source.close()
        copy.close()


class Terminated(Exception):
    """SIGTERM (a CI timeout, `kill`): raised where the main thread is, so the servers are stopped and their
    directories removed as after Ctrl-C, where Python's default would leave them running."""


def _terminated(signum, frame) -> None:
    raise Terminated


def main(argv: list[str]) -> int:
    signal.signal(signal.SIGTERM, _terminated)
    if argv[:1] == ["--install"]:
        return install_all()
    if "--" in argv:
        argv = argv[argv.index("--") + 1 :]
    if not argv:
        sys.exit("usage: testenv.py -- COMMAND [ARGS...] | testenv.py --install")
    env = dict(os.environ)
    with ExitStack() as stack:
        if not env.get("MIGRATED_CACHE"):
            env["MIGRATED_CACHE"] = stack.enter_context(tempfile.TemporaryDirectory(prefix="testenv-migrated-"))
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
        except Terminated:
            process.terminate()  # the command stops first, then the servers it used
            try:
                return process.wait(30)
            except subprocess.TimeoutExpired:
                process.kill()
                return process.wait()


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
