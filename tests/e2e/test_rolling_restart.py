"""A rolling restart behind HAProxy loses nothing: a production node starts and stops as one unit.

Two `make serve` web nodes (scripts/serve.sh with SERVE_BEHIND_PROXY=1; the first also runs the one
worker and the one beat) share a PostgreSQL and a Redis behind HAProxy running docs/haproxy.cfg. The
release step runs once, then the nodes start. Under a steady mix of reads and idempotent writes through
the proxy, each node in turn gets a plain SIGTERM (no proxy-side drain), exits, starts again and is
waited for until HAProxy sees it UP. Every answer is counted: no 5xx, no connection error, and every
acknowledged POST's task is in the database (docs/operations.md, "Rolling deploys").

ROLLING_RESTART_ROUNDS (default 1) repeats the whole rolling restart; the acceptance figure of 5 rounds
was run by hand with it.
"""

from __future__ import annotations

import contextlib
import logging
import os
import secrets
import shutil
import subprocess
import time
import uuid
from urllib.parse import urlsplit

import httpx
import psycopg

from tests.e2e.faults_support import PASSWORD, testenv, wait_until
from tests.e2e.harness import ROOT
from tests.e2e.multinode import Load, Node, Proxy, failures, free_port, node_env, proxy_config, status_counts

DRAIN_SECONDS = 5  # scripts/serve.sh's default SHUTDOWN_DRAIN_SECONDS
ROUNDS = int(os.environ.get("ROLLING_RESTART_ROUNDS") or 1)


@contextlib.contextmanager
def _backing():
    """The suite's PostgreSQL and Redis (scripts/testenv.py), or throw-away ones when run without it."""
    with contextlib.ExitStack() as stack:
        database_url = os.environ.get("DATABASE_URL") or stack.enter_context(testenv.postgres())
        redis_url = os.environ.get("REDIS_URL") or stack.enter_context(testenv.redis())
        yield database_url, redis_url


def _fresh_database(database_url: str) -> str:
    """A database of its own on that server, as an operator creates it for a deployment."""
    name = "rolling_" + uuid.uuid4().hex[:8]
    url = urlsplit(database_url)
    with psycopg.connect(url._replace(path="/postgres").geturl(), autocommit=True, connect_timeout=5) as conn:
        conn.execute(f'CREATE DATABASE "{name}"')
    return url._replace(path=f"/{name}").geturl()


def _sql(database_url: str, query: str, *params) -> list[tuple]:
    with psycopg.connect(database_url, autocommit=True, connect_timeout=5) as conn:
        cursor = conn.execute(query, params)
        return cursor.fetchall() if cursor.description else []


def _token(base: str) -> str:
    email = f"rolling-{uuid.uuid4().hex[:8]}@example.com"
    with httpx.Client(base_url=base, timeout=20) as client:
        response = client.post("/api/v1/auth/register", json={"email": email, "password": PASSWORD})
        assert response.status_code == 201, response.text
        response = client.post("/api/v1/auth/token", json={"email": email, "password": PASSWORD})
        assert response.status_code == 200, response.text
        return response.json()["access"]


def test_a_rolling_restart_behind_haproxy_fails_no_request(tmp_path):
    logging.getLogger("httpx").setLevel(logging.WARNING)  # one line per request otherwise
    began = time.monotonic()
    binary = testenv.haproxy_binary()
    nodes: list[Node] = []
    proxy: Proxy | None = None
    load: Load | None = None
    with _backing() as (database_url, redis_url):
        database_url = _fresh_database(database_url)
        redis_url = urlsplit(redis_url)._replace(path="/2").geturl()  # apart from the in-process suite's
        base_env = {key: os.environ[key] for key in ("PATH", "HOME", "LANG", "LC_ALL", "TMPDIR") if key in os.environ}
        base_env.update(
            DATABASE_URL=database_url,
            REDIS_URL=redis_url,
            DJANGO_SECRET_KEY=secrets.token_urlsafe(50),  # one deployment: one key on every node
            SERVE_BEHIND_PROXY="1",
            TRUSTED_PROXIES="127.0.0.1/32",
            SERVE_RELEASE="0",
            WEB_CONCURRENCY="2",
            GUNICORN_THREADS="4",
            CELERY_CONCURRENCY="1",
            PAYMENTS_ALLOW_LOCAL_PROVIDER_IN_PRODUCTION="true",
            PYTHONUNBUFFERED="1",
        )
        try:
            # The release step, once per deploy, before any node serves.
            release_var = tmp_path / "release-var"
            release = subprocess.run(
                [str(ROOT / "scripts" / "release.sh")],
                cwd=ROOT,
                env={**base_env, "VAR_DIR": str(release_var)},
                capture_output=True,
                text=True,
                timeout=180,
            )
            assert release.returncode == 0, release.stdout + release.stderr
            # Staff lift the rate limits for the load's address (the admin's override; nodes read it at start).
            _sql(
                database_url,
                'INSERT INTO core_ratelimitoverride (network, rule, "limit", reason, created_at, updated_at) '
                "VALUES ('127.0.0.1/32', '*', 10000000, 'rolling restart test', now(), now())",
            )

            for name, roles in (("web1", "web,worker,beat"), ("web2", "web")):
                var_dir = tmp_path / name / "var"
                var_dir.mkdir(parents=True)
                port = free_port()
                env = node_env(base_env, var_dir, port, roles)
                nodes.append(Node(name, env, var_dir, port, tmp_path / name / "serve.log"))
            for node in nodes:
                node.start()
            for node in nodes:
                node.wait_ready()
                print(f"\n{node.name} ({node.env['SERVE_ROLES']}) {node.db_connections_line()}", flush=True)

            proxy_port = free_port()
            config = tmp_path / "haproxy.cfg"
            config.write_text(
                proxy_config(
                    (ROOT / "docs" / "haproxy.cfg").read_text(),
                    bind=f"127.0.0.1:{proxy_port}",
                    servers={node.name: f"127.0.0.1:{node.port}" for node in nodes},
                    stats_socket=tmp_path / "haproxy.sock",
                )
            )
            proxy = Proxy(binary, config, tmp_path / "haproxy.sock", proxy_port, tmp_path / "haproxy.log")
            proxy.start()
            for node in nodes:
                proxy.wait_state(node.name, "UP")

            load = Load(proxy.base, _token(proxy.base), max_seconds=120 * ROUNDS + 60).start()
            wait_until(lambda: len(load.created) >= 20, "the load to get going", 30, 0.1)

            windows = []
            for round_ in range(1, ROUNDS + 1):
                for node in nodes:
                    start = node.terminate()

                    def taken_out(node=node) -> str | None:
                        if proxy.server_states().get(node.name) == "DOWN":
                            return "while serving" if node.process.poll() is None else "after it stopped"
                        return None

                    # The proxy must see the node fail its readiness while the node still accepts (it drains).
                    out = wait_until(taken_out, f"HAProxy to take {node.name} out", 30, 0.05)
                    out_after = time.monotonic() - start
                    assert out == "while serving", f"{node.name} stopped before HAProxy took it out\n{node.log_tail()}"
                    assert node.process.wait(timeout=45) == 0, node.log_tail()
                    stopped_in = time.monotonic() - start
                    # It drained for the whole SHUTDOWN_DRAIN_SECONDS (5 in serve.sh), web-only node or not.
                    assert stopped_in >= DRAIN_SECONDS, f"{node.name} exited {stopped_in:.1f} s after SIGTERM"
                    node.start()
                    node.wait_ready()
                    proxy.wait_state(node.name, "UP")
                    end = time.monotonic()
                    windows.append((round_, node.name, start, end, out_after, stopped_in))
            # Requests sent in the last window are still being answered: let them finish.
            after = time.monotonic()
            wait_until(lambda: any(a.at >= after for a in list(load.answers)), "one more answer", 30, 0.05)
            load.stop()

            stored = {str(row[0]) for row in _sql(database_url, "SELECT id FROM tasks_market_task")}
            bad = []
            for round_, name, start, end, out_after, stopped_in in windows:
                answers, created = load.window(start, end)
                failed = failures(answers)
                missing = [task for task in created if task not in stored]
                print(
                    f"round {round_} {name}: restart {end - start:.1f} s (SIGTERM to DOWN {out_after:.1f} s, "
                    f"to exit {stopped_in:.1f} s) "
                    f"requests={len(answers)} statuses[{status_counts(answers)}] failures={len(failed)} "
                    f"writes missing={len(missing)}",
                    flush=True,
                )
                bad += failed
            everything = load.answers
            all_missing = [task for task in load.created if task not in stored]
            seconds = everything[-1].at - everything[0].at
            print(
                f"whole run: requests={len(everything)} ({len(everything) / seconds:.0f}/s) "
                f"statuses[{status_counts(everything)}] failures={len(failures(everything))} "
                f"acknowledged writes={len(load.created)} missing={len(all_missing)} "
                f"{proxy.retries()} test time {time.monotonic() - began:.0f} s",
                flush=True,
            )
            assert bad == [] and failures(everything) == [], failures(everything)[:20]
            assert all_missing == []
            assert {a.status for a in everything} <= {200, 201}, status_counts(everything)
            assert proxy.process.poll() is None
        except BaseException:
            for node in nodes:
                print(f"--- {node.name} log tail ---\n{node.log_tail(40)}")
            if proxy is not None and proxy.log.exists():
                print("--- haproxy log tail ---\n" + "\n".join(proxy.log.read_text().splitlines()[-40:]))
            raise
        finally:
            if load is not None:
                load.stop()
            if proxy is not None:
                proxy.stop()
            for node in nodes:
                node.stop()
            shutil.rmtree(tmp_path / "release-var", ignore_errors=True)
