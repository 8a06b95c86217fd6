"""The real servers, started from the working tree as a user starts them, and real HTTPS clients.

Two shapes:

- `run`: `make run HOST=127.0.0.1 PORT=<free>` exactly as a newcomer types it: the embedded defaults
  (SQLite, local-memory cache, the filesystem broker, a Celery worker and beat) in a fresh VAR_DIR.
- `serve`: `make serve` (gunicorn, Celery worker and beat, production settings) on a fresh PostgreSQL
  and Redis of its own (scripts/testenv.py's `postgres()` / `redis()`).

Nothing here imports the project: the servers are driven over HTTPS only, and the few things a staff
member does by hand (a staff user, a rate-limit override) go through `manage.py` with the server's
own environment.
"""

from __future__ import annotations

import contextlib
import hashlib
import hmac
import importlib.util
import json
import os
import secrets
import signal
import socket
import subprocess
import sys
import tempfile
import threading
import time
import uuid
from collections import Counter
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from urllib.parse import urlsplit

import httpx

ROOT = Path(__file__).resolve().parents[2]
PYTHON = str(ROOT / ".venv" / "bin" / "python")
WEBHOOK_SECRET = "whsec_e2e_" + secrets.token_hex(16)
PASSWORD = "e2e-Correct-Horse-" + secrets.token_hex(4)
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


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


def _testenv():
    """scripts/testenv.py, imported by path (it is a script, not a package)."""
    spec = importlib.util.spec_from_file_location("e2e_testenv", ROOT / "scripts" / "testenv.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def _descendants(pid: int) -> list[int]:
    """Every process below `pid` (serve.sh puts its children in sessions of their own)."""
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


def _alive(pid: int) -> bool:
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
        result = subprocess.run(
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
        self.process = subprocess.Popen(
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
                if httpx.get(f"{self.base_url}/health", verify=False, timeout=5).status_code == 200:
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
        everyone = [pid, *_descendants(pid)]
        with contextlib.suppress(ProcessLookupError):
            os.killpg(pid, signal.SIGINT)
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline and any(_alive(p) for p in everyone if p != pid):
            with contextlib.suppress(subprocess.TimeoutExpired):
                self.process.wait(timeout=0.2)
        with contextlib.suppress(ProcessLookupError):
            os.killpg(pid, signal.SIGKILL)
        for leftover in everyone:
            if _alive(leftover):
                with contextlib.suppress(ProcessLookupError):
                    os.kill(leftover, signal.SIGKILL)
        with contextlib.suppress(subprocess.TimeoutExpired):
            self.process.wait(timeout=10)
        self.process = None


def _base_env(var_dir: Path) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if k not in INHERITED_NOT}
    env.update(VAR_DIR=str(var_dir), PAYMENTS_WEBHOOK_SECRET=WEBHOOK_SECRET, PYTHONUNBUFFERED="1")
    return env


def lift_rate_limits(server: Server) -> None:
    """Staff raise the caps for the test clients' address, as the admin's override would."""
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
    env = _base_env(var_dir)
    env["OUTBOUND_ALLOW_PRIVATE_URLS"] = "true"  # agents and webhook receivers of the tests are on 127.0.0.1
    server = Server("run", free_port(), env, var_dir, workdir / "server.log")
    try:
        server.start()
        lift_rate_limits(server)  # before any counted request: the web process caches the overrides
        yield server
    finally:
        server.stop()


@contextlib.contextmanager
def serve_shape(workdir: Path) -> Iterator[Server]:
    """`make serve` on a PostgreSQL and a Redis of its own."""
    testenv = _testenv()
    with testenv.postgres() as database_url, testenv.redis() as redis_url:
        var_dir = workdir / "var"
        var_dir.mkdir(parents=True)
        env = _base_env(var_dir)
        env.update(
            DATABASE_URL=database_url,
            REDIS_URL=redis_url,
            DJANGO_SECRET_KEY=secrets.token_urlsafe(50),
            WEB_CONCURRENCY="2",
            CELERY_CONCURRENCY="2",
            # The journeys pay through the local provider; production refuses it without this opt-in.
            PAYMENTS_ALLOW_LOCAL_PROVIDER_IN_PRODUCTION="true",
        )
        # testenv's PostgreSQL starts empty: the operator creates the database the URL names.
        subprocess.run(
            [
                f"{testenv.postgres_bindir()}/createdb",
                *("-h", "127.0.0.1", "-p", str(urlsplit(database_url).port), "-U", "postgres"),
                urlsplit(database_url).path.lstrip("/"),
            ],
            check=True,
            capture_output=True,
        )
        server = Server("serve", free_port(), env, var_dir, workdir / "server.log")
        try:
            server.start()
            lift_rate_limits(server)
            yield server
        finally:
            server.stop()


@contextlib.contextmanager
def start_shape(shape: str) -> Iterator[Server]:
    workdir = Path(tempfile.mkdtemp(prefix=f"e2e-{shape}-"))
    with (run_shape if shape == "run" else serve_shape)(workdir) as server:
        yield server


# --- Recording what a scenario did ---------------------------------------------------------------------


@dataclass
class Scenario:
    shape: str
    name: str
    requests: int = 0
    statuses: Counter = field(default_factory=Counter)
    effects: dict = field(default_factory=dict)
    lock: threading.Lock = field(default_factory=threading.Lock, repr=False)

    def count(self, status: int | str) -> None:
        with self.lock:
            self.requests += 1
            self.statuses[status] += 1

    def server_errors(self) -> dict:
        return {s: n for s, n in self.statuses.items() if not isinstance(s, int) or s >= 500}

    def line(self) -> str:
        statuses = " ".join(f"{s}x{n}" for s, n in sorted(self.statuses.items(), key=lambda kv: str(kv[0])))
        effects = " ".join(f"{k}={v}" for k, v in self.effects.items())
        return f"{self.shape:<5} {self.name:<24} requests={self.requests:<5} statuses[{statuses}] effects[{effects}]"


SCENARIOS: list[Scenario] = []


class Api:
    """One HTTPS client (its own connection pool), counting every response into a scenario."""

    def __init__(self, server: Server, scenario: Scenario, token: str | None = None):
        headers = {"Authorization": f"Bearer {token}"} if token else {}
        self.scenario = scenario
        self.client = httpx.Client(base_url=server.base_url, verify=False, timeout=60, headers=headers)

    def request(self, method: str, path: str, **kwargs) -> httpx.Response:
        try:
            response = self.client.request(method, path, **kwargs)
        except httpx.HTTPError as exc:
            self.scenario.count(f"error:{type(exc).__name__}")
            raise
        self.scenario.count(response.status_code)
        return response

    def get(self, path: str, **kwargs) -> httpx.Response:
        return self.request("GET", path, **kwargs)

    def post(self, path: str, **kwargs) -> httpx.Response:
        return self.request("POST", path, **kwargs)

    def patch(self, path: str, **kwargs) -> httpx.Response:
        return self.request("PATCH", path, **kwargs)

    def warm(self) -> None:
        """Open the TLS connection now, so that the barrier releases requests, not handshakes."""
        self.client.get("/health")

    def close(self) -> None:
        self.client.close()


def together(calls: list[Callable[[], httpx.Response]]) -> list[httpx.Response | Exception]:
    """Run every call in its own thread, all released at once by a barrier; results in order."""
    barrier = threading.Barrier(len(calls))
    results: list = [None] * len(calls)

    def worker(index: int, call: Callable[[], httpx.Response]) -> None:
        barrier.wait()
        try:
            results[index] = call()
        except Exception as exc:  # recorded; the scenario asserts there were none
            results[index] = exc

    threads = [threading.Thread(target=worker, args=(i, c)) for i, c in enumerate(calls)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    return results


def statuses(results: list) -> Counter:
    return Counter(r.status_code if isinstance(r, httpx.Response) else f"error:{type(r).__name__}" for r in results)


# --- Users ----------------------------------------------------------------------------------------------


def register(api: Api, *, email: str | None = None) -> tuple[str, str]:
    """A new user through the API; returns its e-mail and an access token."""
    email = email or f"e2e-{uuid.uuid4().hex[:12]}@example.com"
    created = api.post("/api/v1/auth/register", json={"email": email, "password": PASSWORD})
    assert created.status_code == 201, created.text
    return email, login(api, email)


def login(api: Api, email: str) -> str:
    token = api.post("/api/v1/auth/token", json={"email": email, "password": PASSWORD})
    assert token.status_code == 200, token.text
    return token.json()["access"]


def create_user(server: Server, *, staff: bool = False, permissions: tuple[str, ...] = (), credits: int = 0) -> str:
    """A user made on the machine with `manage.py create_user` (staff, or starting credits); its e-mail. Staff
    reach a staff endpoint only with its Django permission ("app_label.codename", docs/decisions.md#staff-permissions),
    given here as a superuser would in the admin's user page."""
    email = f"e2e-{uuid.uuid4().hex[:12]}@example.com"
    args = ["create_user", email, "--password", PASSWORD, "--credits", str(credits)]
    server.manage(*args, *(["--staff"] if staff else []))
    if permissions:
        granted = server.query(
            "from django.contrib.auth.models import Permission\n"
            "from accounts.models import User\n"
            f"user = User.objects.get(email={email!r})\n"
            f"for app_label, codename in (name.split('.') for name in {list(permissions)!r}):\n"
            "    granted = Permission.objects.get(content_type__app_label=app_label, codename=codename)\n"
            "    user.user_permissions.add(granted)\n"
            "result = sorted(User.objects.get(pk=user.pk).get_all_permissions())"
        )
        assert granted == sorted(permissions), granted
    return email


# --- Payments webhook (docs/decisions.md#payments-webhook-inbound) ----------------------------------------


def signed_event(event_type: str, obj: dict, *, secret: str = WEBHOOK_SECRET) -> tuple[bytes, dict[str, str]]:
    """One provider event and its headers, signed as the provider signs it."""
    now = int(time.time())
    event = {
        "id": "evt_" + secrets.token_hex(12),
        "object": "event",
        "type": event_type,
        "created": now,
        "livemode": False,
        "data": {"object": obj},
    }
    body = json.dumps(event, separators=(",", ":")).encode()
    digest = hmac.new(secret.encode(), f"{now}.".encode() + body, hashlib.sha256).hexdigest()
    return body, {"Content-Type": "application/json", "Payments-Signature": f"t={now},v1={digest}"}


# --- A webhook / agent endpoint on 127.0.0.1 (the run shape only) ----------------------------------------


class Receiver:
    """Answers 200 to every POST and keeps what it got."""

    def __init__(self):
        self.requests: list[dict] = []
        self.lock = threading.Lock()
        receiver = self

        class Handler(BaseHTTPRequestHandler):
            def do_POST(self):
                body = self.rfile.read(int(self.headers.get("Content-Length") or 0))
                with receiver.lock:
                    receiver.requests.append({"headers": {k.lower(): v for k, v in self.headers.items()}, "body": body})
                self.send_response(200)
                self.send_header("Content-Type", "application/json")
                self.end_headers()
                self.wfile.write(b"{}")

            def log_message(self, *args):
                pass

        self._server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self._server.daemon_threads = True
        threading.Thread(target=self._server.serve_forever, daemon=True).start()

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self._server.server_address[1]}/hook"

    def bodies(self) -> list[dict]:
        with self.lock:
            return [json.loads(r["body"]) for r in self.requests]

    def close(self) -> None:
        self._server.shutdown()
        self._server.server_close()


if __name__ == "__main__":  # manual check: start a shape, print its URL, wait for Ctrl-C
    with start_shape(sys.argv[1] if len(sys.argv) > 1 else "run") as started:
        print(started.base_url, started.log_path, flush=True)
        with contextlib.suppress(KeyboardInterrupt):
            while True:
                time.sleep(1)
