"""`make run` started as a newcomer starts it, and the processes of a node found and waited for.

`run_shape()` starts `make run HOST=127.0.0.1 PORT=<free>` in a session of its own with a fresh VAR_DIR
(the embedded defaults: SQLite, local-memory cache, the embedded broker, a Celery worker and beat), waits
for /health, lifts the rate limits for 127.0.0.1 as staff would, and stops every process at the end.
`processes_of(var_dir)` finds a node's processes by the VAR_DIR in their environment (unique per node).
"""

from __future__ import annotations

import contextlib
import importlib.util
import json
import os
import secrets
import signal
import socket
import subprocess
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path

import httpx

ROOT = Path(__file__).resolve().parents[1]
PYTHON = str(ROOT / ".venv" / "bin" / "python")
WEBHOOK_SECRET = "whsec_e2e_" + secrets.token_hex(16)
# `make test` exports these for the in-process suite (and config.settings.test sets some of them in
# os.environ): a server started as a user starts it must not inherit any of them.
INHERITED_NOT = {
    "DATABASE_URL",
    "REDIS_URL",
    "CELERY_BROKER_URL",
    "DJANGO_SETTINGS_MODULE",
    "MEDIA_ROOT",
    "DJANGO_SECRET_KEY",
    "DJANGO_DEBUG",
    "OUTBOUND_ALLOW_PRIVATE_URLS",
    "PAYMENTS_WEBHOOK_SECRET",
    "PAYMENTS_LOCAL_WEBHOOK_URL",
    "VAR_DIR",
    "REDIS_URL_BEFORE_XDIST",
    "HOST",
    "PORT",
    "MAKEFLAGS",
    "MAKELEVEL",
    "MFLAGS",
}
SETTINGS = {"run": "config.settings.local", "serve": "config.settings.production"}

# scripts/testenv.py (throw-away PostgreSQL, Redis; Debian binaries), imported by path: it is a script.
_spec = importlib.util.spec_from_file_location("testenv", ROOT / "scripts" / "testenv.py")
testenv = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(testenv)


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


def processes_of(var_dir: Path) -> dict[int, str]:
    """Our own processes: those whose environment carries this node's VAR_DIR (it is unique per node)."""
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


def descendants(pid: int) -> list[int]:
    """Every process below `pid` (the supervisor puts its children in sessions of their own)."""
    children: dict[int, list[int]] = {}
    for stat in Path("/proc").glob("[0-9]*/stat"):
        try:
            fields = stat.read_text().rsplit(")", 1)[1].split()
        except OSError:
            continue
        children.setdefault(int(fields[1]), []).append(int(stat.parent.name))
    found, todo = [], [pid]
    while todo:
        for child in children.get(todo.pop(), []):
            found.append(child)
            todo.append(child)
    return found


def alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    try:  # a zombie is dead for our purposes
        return Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0] != "Z"
    except OSError:
        return False


@dataclass
class Server:
    shape: str  # "run" or "serve"
    port: int
    env: dict[str, str]
    var_dir: Path
    log_path: Path
    process: subprocess.Popen | None = None

    @property
    def base_url(self) -> str:
        return f"https://127.0.0.1:{self.port}"

    def log_tail(self, lines: int = 80) -> str:
        try:
            text = self.log_path.read_text(errors="replace")
        except OSError:
            return "(no server log)"
        return "\n".join(text.splitlines()[-lines:])

    def log_errors(self, lines: int = 40) -> str:
        """The last error lines of the server's output (the tail is often the worker's chatter)."""
        try:
            text = self.log_path.read_text(errors="replace")
        except OSError:
            return "(no server log)"
        marks = ("ERROR", "Error", "Traceback", "OperationalError", '" 5')
        return "\n".join([line for line in text.splitlines() if any(m in line for m in marks)][-lines:])

    def log_text(self) -> str:
        return self.log_path.read_text(errors="replace")

    def manage(self, *args: str, timeout: float = 120) -> str:
        """`manage.py ARGS` with the server's environment (what staff run on the machine); its stdout."""
        env = {**self.env, "DJANGO_SETTINGS_MODULE": SETTINGS[self.shape]}
        result = subprocess.run(  # noqa: S603 (our own interpreter and manage.py)
            [PYTHON, "manage.py", *args], cwd=ROOT, env=env, capture_output=True, text=True, timeout=timeout
        )
        if result.returncode != 0:
            raise RuntimeError(f"manage.py {args[0]} failed:\n{result.stdout}\n{result.stderr}")
        return result.stdout

    def query(self, code: str):
        """Evaluate Python in `manage.py shell` with the server's environment; `code` sets `result`."""
        out = self.manage("shell", "-c", code + "\nimport json; print('E2E-RESULT ' + json.dumps(result))")
        line = [line for line in out.splitlines() if line.startswith("E2E-RESULT ")][-1]
        return json.loads(line.removeprefix("E2E-RESULT "))

    def start(self, timeout: float = 240) -> None:
        command = ["make", "run" if self.shape == "run" else "serve", "HOST=127.0.0.1", f"PORT={self.port}"]
        log = self.log_path.open("ab")
        self.process = subprocess.Popen(  # noqa: S603
            command,
            cwd=ROOT,
            env=self.env,
            stdin=subprocess.DEVNULL,
            stdout=log,
            stderr=subprocess.STDOUT,
            start_new_session=True,
        )
        log.close()
        deadline = time.monotonic() + timeout
        while True:
            if self.process.poll() is not None:
                raise RuntimeError(f"`{' '.join(command)}` exited ({self.process.returncode}):\n{self.log_tail()}")
            try:
                if httpx.get(f"{self.base_url}/health", verify=False, timeout=5).status_code == 200:  # noqa: S501 (self-signed)
                    return
            except httpx.HTTPError:
                pass
            if time.monotonic() > deadline:
                raise RuntimeError(f"`{' '.join(command)}` never answered /health with 200:\n{self.log_tail()}")
            time.sleep(0.5)

    def stop(self, timeout: float = 30) -> None:
        """Ctrl-C (SIGINT to the whole process group), then KILL whatever is left, setsid'd children too."""
        if self.process is None:
            return
        pid = self.process.pid
        everyone = [pid, *descendants(pid)]
        with contextlib.suppress(ProcessLookupError):
            os.killpg(pid, signal.SIGINT)
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline and any(alive(p) for p in everyone if p != pid):
            with contextlib.suppress(subprocess.TimeoutExpired):
                self.process.wait(timeout=0.2)
        with contextlib.suppress(ProcessLookupError):
            os.killpg(pid, signal.SIGKILL)
        for leftover in everyone:
            if alive(leftover):
                with contextlib.suppress(ProcessLookupError):
                    os.kill(leftover, signal.SIGKILL)
        with contextlib.suppress(subprocess.TimeoutExpired):
            self.process.wait(timeout=10)
        self.process = None


def base_env(var_dir: Path) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if k not in INHERITED_NOT}
    env.update(VAR_DIR=str(var_dir), PAYMENTS_WEBHOOK_SECRET=WEBHOOK_SECRET, PYTHONUNBUFFERED="1")
    return env


def lift_rate_limits(server: Server) -> None:
    """Staff raise the caps for the clients' address, as the admin's override would."""
    server.query(
        "from core.models import RateLimitOverride\n"
        "RateLimitOverride.objects.update_or_create(network='127.0.0.1', rule='*',"
        " defaults={'limit': 10_000_000, 'reason': 'outside-in tests'})\n"
        "result = RateLimitOverride.objects.count()"
    )


@contextlib.contextmanager
def run_shape(workdir: Path) -> Iterator[Server]:
    """`make run` with the embedded defaults in a fresh VAR_DIR."""
    var_dir = workdir / "var"
    var_dir.mkdir(parents=True)
    env = base_env(var_dir)
    env["OUTBOUND_ALLOW_PRIVATE_URLS"] = "true"  # agents and webhook receivers of the tests are on 127.0.0.1
    server = Server("run", free_port(), env, var_dir, workdir / "server.log")
    try:
        server.start()
        lift_rate_limits(server)  # before any counted request: the web process caches the overrides
        yield server
    finally:
        server.stop()
