"""Saved-search announcements under load, from outside (docs/decisions.md#saved-searches): how long after a
task's creation does an agent whose saved search matches it receive `task.matched`?

    .venv/bin/python scripts/testenv.py -- .venv/bin/python -m bench.announcements [--rate 20] [--seconds 30] \
        [--shape run|serve]

Starts `make run` (the embedded defaults a newcomer gets: SQLite, the filesystem broker, one Celery worker of
two processes and beat) in a fresh VAR_DIR, or with `--shape serve` `make serve` (gunicorn, Celery on Redis,
PostgreSQL; production settings but for bench/settings_outbound.py, which lets the agent endpoint be on
127.0.0.1), registers a poster and an agent owner over HTTPS, gives the owner `--agents` agents
at one local endpoint, each with a saved search for `research` tasks (and as many with a search that matches
nothing, so that matching has work to skip), then posts `research` tasks at `--rate` a second for `--seconds`
(each create on its own thread, paced by the clock, so a slow answer delays no later one). The latency of an
announcement is from the create's 201 (the task exists and is committed) to the endpoint receiving it.

Prints a Markdown table (creates, announcements, p50, p95, p99, max) and exits non-zero when an announcement
is missing or arrived twice. Not run by `make test`.
"""

from __future__ import annotations

import argparse
import contextlib
import json
import secrets
import statistics
import subprocess
import tempfile
import threading
import time
from concurrent.futures import ThreadPoolExecutor
from datetime import UTC, datetime, timedelta
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from urllib.parse import urlsplit

from tests.e2e.harness import Api, Scenario, register, start_shape
from tools.nodes import Server, base_env, free_port, lift_rate_limits, testenv


@contextlib.contextmanager
def serve_for_bench(celery_concurrency: int):
    """`make serve` on a PostgreSQL and a Redis of its own (as tests/e2e/harness.py's serve shape), with the
    benchmark's settings module."""
    workdir = Path(tempfile.mkdtemp(prefix="bench-announce-"))
    with testenv.postgres() as database_url, testenv.redis() as redis_url:
        var_dir = workdir / "var"
        var_dir.mkdir(parents=True)
        env = base_env(var_dir)
        env.update(
            DJANGO_SETTINGS_MODULE="bench.settings_outbound",
            DATABASE_URL=database_url,
            REDIS_URL=redis_url,
            DJANGO_SECRET_KEY=secrets.token_urlsafe(50),
            WEB_CONCURRENCY="2",
            CELERY_CONCURRENCY=str(celery_concurrency),
            PAYMENTS_ALLOW_LOCAL_PROVIDER_IN_PRODUCTION="true",
            IMAGES_ALLOW_LOCAL_PROVIDER_IN_PRODUCTION="true",
            PUBLISHING_ALLOW_LOCAL_PROVIDER_IN_PRODUCTION="true",
            SEO_ALLOW_LOCAL_PROVIDER_IN_PRODUCTION="true",
            SOCIAL_OAUTH_ALLOW_LOCAL_PROVIDER_IN_PRODUCTION="true",
        )
        url = urlsplit(database_url)
        createdb = [f"{testenv.postgres_bindir()}/createdb", "-h", "127.0.0.1", "-p", str(url.port), "-U", "postgres"]
        subprocess.run(  # noqa: S603 (the Debian binary testenv found, and our own database name)
            [*createdb, url.path.lstrip("/")],
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


class Endpoint:
    """The agents' endpoint: answers 200 and notes when each (agent, task) announcement arrived."""

    def __init__(self):
        self.arrived: dict[tuple[str, str], list[float]] = {}
        lock = threading.Lock()
        endpoint = self

        class Handler(BaseHTTPRequestHandler):
            def do_POST(self):
                at = time.monotonic()
                body = json.loads(self.rfile.read(int(self.headers.get("Content-Length") or 0)))
                if body.get("type") == "task.matched":
                    key = (self.path, body["data"]["task"]["id"])
                    with lock:
                        endpoint.arrived.setdefault(key, []).append(at)
                self.send_response(200)
                self.send_header("Content-Type", "application/json")
                self.end_headers()
                self.wfile.write(b"{}")

            def log_message(self, *args):
                pass

        self.server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.server.daemon_threads = True
        threading.Thread(target=self.server.serve_forever, daemon=True).start()

    def url(self, agent: int) -> str:
        return f"http://127.0.0.1:{self.server.server_address[1]}/agent-{agent}"


def task_body(index: int) -> dict:
    return {
        "title": f"Competitor research report {index}",
        "description": "Analyse the pricing pages of five competitors.",
        "budget_amount": "150.00",
        "budget_currency": "usd",
        "deadline": (datetime.now(UTC) + timedelta(days=7)).isoformat(),
        "category": "research",
        "requirements": ["sources cited"],
    }


def percentile(values: list[float], q: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(len(ordered) * q))]


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rate", type=float, default=20.0, help="task creates a second")
    parser.add_argument("--seconds", type=float, default=30.0)
    parser.add_argument("--agents", type=int, default=3, help="agents whose saved search matches every task")
    parser.add_argument("--wait", type=float, default=60.0, help="seconds to wait for the last announcements")
    parser.add_argument("--shape", choices=["run", "serve"], default="run")
    parser.add_argument("--celery-concurrency", type=int, default=2, help="worker processes (--shape serve)")
    args = parser.parse_args()

    endpoint = Endpoint()
    shape = start_shape("run") if args.shape == "run" else serve_for_bench(args.celery_concurrency)
    with shape as server:
        scenario = Scenario(args.shape, "announcements")
        anonymous = Api(server, scenario)
        _, poster_token = register(anonymous)
        _, owner_token = register(anonymous)
        owner = Api(server, scenario, owner_token)
        matching = []
        for index in range(2 * args.agents):
            made = owner.post(
                "/api/v1/agents",
                json={"name": f"Agent {index}", "description": "bench", "endpoint_url": endpoint.url(index)},
            )
            assert made.status_code == 201, made.text
            search = {"category": ["research"]} if index < args.agents else {"category": ["design"], "q": "logo"}
            saved = owner.post(f"/api/v1/agents/{made.json()['id']}/searches", json=search)
            assert saved.status_code == 201, saved.text
            if index < args.agents:
                matching.append(f"/agent-{index}")

        posters = threading.local()
        created: dict[str, float] = {}
        failures: list[str] = []

        def create(index: int) -> None:
            if not hasattr(posters, "api"):
                posters.api = Api(server, scenario, poster_token)
            response = posters.api.post("/api/v1/tasks", json=task_body(index))
            if response.status_code == 201:
                created[response.json()["id"]] = time.monotonic()
            else:
                failures.append(f"{response.status_code} {response.text[:200]}")

        count = int(args.rate * args.seconds)
        started = time.monotonic()
        with ThreadPoolExecutor(max_workers=16) as pool:
            for index in range(count):
                time.sleep(max(0.0, started + index / args.rate - time.monotonic()))
                pool.submit(create, index)
        posting = time.monotonic() - started

        expected = {(path, task) for path in matching for task in created}
        deadline = time.monotonic() + args.wait
        while time.monotonic() < deadline and not expected <= endpoint.arrived.keys():
            time.sleep(0.2)

    latencies = [endpoint.arrived[key][0] - created[key[1]] for key in expected if key in endpoint.arrived]
    missing = len(expected - endpoint.arrived.keys())
    twice = sum(1 for key, times in endpoint.arrived.items() if len(times) > 1)
    stray = len(endpoint.arrived.keys() - expected)
    print(
        f"\n{'`make run` (embedded defaults)' if args.shape == 'run' else '`make serve` (Redis broker)'}, "
        f"{len(created):,} tasks created in {posting:.1f} s "
        f"({len(created) / posting:.1f}/s), {args.agents} matching saved searches and {args.agents} that match "
        f"nothing; {len(failures)} creates failed\n"
    )
    print("| announcements | missing | twice | p50 | p95 | p99 | max |\n|---:|---:|---:|---:|---:|---:|---:|")
    if latencies:
        print(
            f"| {len(latencies):,} | {missing} | {twice} | {statistics.median(latencies):.2f} s | "
            f"{percentile(latencies, 0.95):.2f} s | {percentile(latencies, 0.99):.2f} s | {max(latencies):.2f} s |"
        )
    for failure in failures[:5]:
        print("create failed:", failure)
    return 1 if missing or twice or stray or failures else 0


if __name__ == "__main__":
    raise SystemExit(main())
