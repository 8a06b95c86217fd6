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
import json
import re
import secrets
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

from accounts.mail import newest_mail_to

# The servers and their processes, shared with scripts/ (tools/nodes.py); the tests import them from here too.
from tools.nodes import INHERITED_NOT as INHERITED_NOT
from tools.nodes import PYTHON as PYTHON
from tools.nodes import ROOT as ROOT
from tools.nodes import SETTINGS as SETTINGS
from tools.nodes import WEBHOOK_SECRET, Server, alive, base_env, free_port, lift_rate_limits, run_shape, testenv

PASSWORD = "e2e-Correct-Horse-" + secrets.token_hex(4)
_alive, _base_env = alive, base_env  # the names the tests import


def _testenv():
    """scripts/testenv.py (imported by path in tools/nodes.py: it is a script, not a package)."""
    return testenv


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
            IMAGES_ALLOW_LOCAL_PROVIDER_IN_PRODUCTION="true",
            PUBLISHING_ALLOW_LOCAL_PROVIDER_IN_PRODUCTION="true",
            SOCIAL_OAUTH_ALLOW_LOCAL_PROVIDER_IN_PRODUCTION="true",
            SEO_ALLOW_LOCAL_PROVIDER_IN_PRODUCTION="true",
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
    clients: list = field(default_factory=list, repr=False)  # the Api clients it made, closed after the test

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
        with scenario.lock:
            scenario.clients.append(self)

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


def mailed_verification_token(server: Server) -> Callable[[str], str]:
    """Reads the token of the verification mail to an address that the server's worker wrote (`make run` writes
    mail to VAR_DIR/mail/; docs/decisions.md#identity-and-authentication), waiting up to 20 s for it."""

    def token_of(email: str) -> str:
        deadline = time.monotonic() + 20
        while time.monotonic() < deadline:
            body = newest_mail_to(server.var_dir / "mail", email, "Verify your e-mail address")
            if body and (found := re.search(r'"token": "([^"]+)"', body)):
                return found.group(1)
            time.sleep(0.1)
        raise AssertionError(f"no verification mail to {email} in {server.var_dir / 'mail'}")

    return token_of


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
