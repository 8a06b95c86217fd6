#!/usr/bin/env python3
"""The multi-node production shape on one machine, for the tests and for an operator on demand.

HAProxy (docs/haproxy.cfg) on 127.0.0.1 in front of two `make serve` web nodes on 127.0.0.2 and 127.0.0.3,
two Celery worker nodes and two beat nodes (celery-redbeat: one schedules, the other waits for its lock),
each node scripts/serve.sh with its own SERVE_ROLES and VAR_DIR, on one PostgreSQL and one Redis. The
release step (scripts/release.sh) runs once, before any node starts. docs/operations.md, "Several nodes".

    scripts/testenv.py -- .venv/bin/python scripts/multinode.py            # start it, print the addresses, wait
    scripts/testenv.py -- .venv/bin/python scripts/multinode.py --rolling 5 --seconds 120
                                                    # 5 rolling restarts under load, then a SIGKILL of web1

Ctrl-C stops everything. tests/e2e/test_multinode_cluster.py uses `Cluster` and the drills (`rolling_restart`,
`kill_a_web_node`); the nodes, the proxy and the load are tools/multinode.py's. `cluster.addresses()` says
where each node listens, its Prometheus exporter included (`metrics`).
"""

from __future__ import annotations

import argparse
import contextlib
import json
import os
import secrets
import shutil
import subprocess
import sys
import tempfile
import threading
import time
import uuid
from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path
from urllib.parse import urlsplit

ROOT = Path(__file__).resolve().parents[1]
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))

import httpx  # noqa: E402
import psycopg  # noqa: E402
import redis  # noqa: E402

from tools.load import PASSWORD  # noqa: E402
from tools.multinode import Answer, Load, Node, Proxy, failures, node_env, proxy_config, status_counts  # noqa: E402
from tools.nodes import free_port, testenv, wait_until  # noqa: E402

DRAIN_SECONDS = 5  # scripts/serve.sh's default SHUTDOWN_DRAIN_SECONDS
PROXY_HOST = "127.0.0.1"  # also the address the nodes trust (TRUSTED_PROXIES) and the one HAProxy connects from
WEB_HOSTS = ("127.0.0.2", "127.0.0.3")
# The beat's lock in the tests: it lapses 3 s after the active beat's last tick (ticks at most 1 s apart),
# so a standby (trying every second) takes over within about 4 s. Production's defaults: config/settings/celery.py.
TEST_BEAT = {"BEAT_LOCK_TIMEOUT_SECONDS": "3", "BEAT_MAX_INTERVAL_SECONDS": "1"}
# A Redis database of the suite's server that no pytest-xdist worker uses (config/settings/test.py gives
# worker gwN database N): the cluster's queues, counters and beat lock stay apart from every cache.clear().
REDIS_DB = 15


def fresh_database(server_url: str, prefix: str = "multinode") -> str:
    """A database of its own on that server, as an operator creates one for a deployment."""
    name = f"{prefix}_{uuid.uuid4().hex[:8]}"
    url = urlsplit(server_url)
    with psycopg.connect(url._replace(path="/postgres").geturl(), autocommit=True, connect_timeout=5) as conn:
        conn.execute(f'CREATE DATABASE "{name}"')
    return url._replace(path=f"/{name}").geturl()


@dataclass
class Cluster:
    """The nodes, the proxy and their environment. `prepare()` (database, release), `start()`, `stop()`."""

    workdir: Path
    database_url: str  # a PostgreSQL server; the cluster makes a database of its own on it
    redis_url: str
    settings: str = "config.settings.production"
    extra_env: dict[str, str] = field(default_factory=dict)
    web_nodes: int = 2
    worker_nodes: int = 2
    beat_nodes: int = 2
    nodes: dict[str, Node] = field(default_factory=dict)
    proxy: Proxy | None = None
    env: dict[str, str] = field(default_factory=dict)

    def prepare(self) -> None:
        self.database_url = fresh_database(self.database_url)
        self.redis_url = urlsplit(self.redis_url)._replace(path=f"/{REDIS_DB}").geturl()
        keep = ("PATH", "HOME", "LANG", "LC_ALL", "TMPDIR")
        self.env = {key: os.environ[key] for key in keep if key in os.environ}
        self.env.update(
            DJANGO_SETTINGS_MODULE=self.settings,
            DATABASE_URL=self.database_url,
            REDIS_URL=self.redis_url,
            DJANGO_SECRET_KEY=secrets.token_urlsafe(50),  # one deployment: one key on every node
            SERVE_BEHIND_PROXY="1",
            TRUSTED_PROXIES=f"{PROXY_HOST}/32",
            DJANGO_ALLOWED_HOSTS=",".join(("localhost", PROXY_HOST, *WEB_HOSTS)),
            SERVE_RELEASE="0",
            WEB_CONCURRENCY="2",
            GUNICORN_THREADS="4",
            CELERY_CONCURRENCY="1",
            PAYMENTS_ALLOW_LOCAL_PROVIDER_IN_PRODUCTION="true",
            IMAGES_ALLOW_LOCAL_PROVIDER_IN_PRODUCTION="true",
            PUBLISHING_ALLOW_LOCAL_PROVIDER_IN_PRODUCTION="true",
            SOCIAL_OAUTH_ALLOW_LOCAL_PROVIDER_IN_PRODUCTION="true",
            SEO_ALLOW_LOCAL_PROVIDER_IN_PRODUCTION="true",
            PYTHONUNBUFFERED="1",
            **self.extra_env,
        )
        with contextlib.suppress(Exception):
            redis.Redis.from_url(self.redis_url).flushdb()  # a previous run's queues and beat lock
        release = subprocess.run(
            [str(ROOT / "scripts" / "release.sh")],
            cwd=ROOT,
            env={**self.env, "VAR_DIR": str(self.workdir / "release-var")},
            capture_output=True,
            text=True,
            timeout=300,
        )
        assert release.returncode == 0, release.stdout + release.stderr
        shutil.rmtree(self.workdir / "release-var", ignore_errors=True)
        plan = [(f"web{n + 1}", "web", WEB_HOSTS[n % len(WEB_HOSTS)]) for n in range(self.web_nodes)]
        plan += [(f"worker{n + 1}", "worker", "127.0.0.1") for n in range(self.worker_nodes)]
        plan += [(f"beat{n + 1}", "beat", "127.0.0.1") for n in range(self.beat_nodes)]
        for name, roles, host in plan:
            var_dir = self.workdir / name / "var"
            var_dir.mkdir(parents=True, exist_ok=True)
            env = node_env(self.env, var_dir, free_port(), roles, host)
            # Each node's Prometheus exporter on a port of its own (scripts/serve.sh), on the node's address: a
            # loopback one (127.0.0.x), so no METRICS_TOKEN is needed.
            env.update(METRICS_HOST=host, METRICS_PORT=str(free_port()), METRICS_WORKER_PORT=str(free_port()))
            if roles == "worker":
                env["CELERY_NODE_NAME"] = f"{name}@multinode"
            self.nodes[name] = Node(name, env, var_dir, int(env["PORT"]), self.workdir / name / "serve.log", host=host)

    def override_rate_limit(self, network: str, limit: int) -> None:
        """Staff's rate-limit override for `network` on every rule (the admin's; nodes read it at start)."""
        self.sql(
            'INSERT INTO core_ratelimitoverride (network, rule, "limit", reason, created_at, updated_at) '
            "VALUES (%s, '*', %s, 'multinode', now(), now())",
            network,
            limit,
        )

    def sql(self, query: str, *params) -> list[tuple]:
        with psycopg.connect(self.database_url, autocommit=True, connect_timeout=5) as conn:
            cursor = conn.execute(query, params)
            return cursor.fetchall() if cursor.description else []

    def start(self, timeout: float = 180) -> None:
        for node in self.nodes.values():
            node.start()
        for node in self.nodes.values():
            self.wait_node(node, timeout)
        port = free_port()
        config = self.workdir / "haproxy.cfg"
        webs = self.webs()
        config.write_text(
            proxy_config(
                (ROOT / "docs" / "haproxy.cfg").read_text(),
                bind=f"{PROXY_HOST}:{port}",
                servers={node.name: node.address for node in webs},
                stats_socket=self.workdir / "haproxy.sock",
            )
        )
        self.proxy = Proxy(
            testenv.haproxy_binary(), config, self.workdir / "haproxy.sock", port, self.workdir / "haproxy.log"
        )
        self.proxy.start()
        for node in webs:
            self.proxy.wait_state(node.name, "UP")

    def wait_node(self, node: Node, timeout: float = 180) -> None:
        role = node.env["SERVE_ROLES"]
        if role == "web":
            node.wait_ready(timeout)
            return
        marker = {"worker": " ready.", "beat": "beat: Starting"}[role]

        def ready() -> bool:
            assert node.running(), f"{node.name} exited:\n{node.log_tail()}"
            return marker in node.log_text()

        wait_until(ready, f"{node.name} to log {marker!r}", timeout, 0.25)

    def webs(self) -> list[Node]:
        return [node for node in self.nodes.values() if node.env["SERVE_ROLES"] == "web"]

    def of_role(self, role: str) -> list[Node]:
        return [node for node in self.nodes.values() if node.env["SERVE_ROLES"] == role]

    def addresses(self) -> dict:
        """Where everything listens: the proxy's URL, each web node's host:port, the other nodes' names."""
        return {
            "proxy": self.proxy.base if self.proxy else None,
            "haproxy_stats_socket": str(self.workdir / "haproxy.sock"),
            "web": {node.name: node.address for node in self.webs()},
            "worker": {node.name: node.env["CELERY_NODE_NAME"] for node in self.of_role("worker")},
            "beat": [node.name for node in self.of_role("beat")],
            "metrics": {
                **{node.name: f"{node.host}:{node.env['METRICS_PORT']}" for node in self.webs()},
                **{node.name: f"{node.host}:{node.env['METRICS_WORKER_PORT']}" for node in self.of_role("worker")},
            },
            "database_url": self.database_url,
            "redis_url": self.redis_url,
            "var_dirs": {node.name: str(node.var_dir) for node in self.nodes.values()},
        }

    def log_tails(self, lines: int = 30) -> str:
        out = [f"--- {node.name} log tail ---\n{node.log_tail(lines)}" for node in self.nodes.values()]
        if self.proxy is not None and self.proxy.log.exists():
            out.append("--- haproxy log tail ---\n" + "\n".join(self.proxy.log.read_text().splitlines()[-lines:]))
        return "\n".join(out)

    def stop(self) -> None:
        if self.proxy is not None:
            self.proxy.stop()
        for node in self.nodes.values():  # all at once: each drains and stops in its own time
            if node.running():
                node.terminate()
        for node in self.nodes.values():
            node.stop()


@contextlib.contextmanager
def backing():
    """PostgreSQL and Redis from DATABASE_URL / REDIS_URL (scripts/testenv.py sets them), or throw-away ones."""
    with contextlib.ExitStack() as stack:
        database_url = os.environ.get("DATABASE_URL") or stack.enter_context(testenv.postgres())
        redis_url = os.environ.get("REDIS_URL_BEFORE_XDIST") or os.environ.get("REDIS_URL")
        yield database_url, redis_url or stack.enter_context(testenv.redis())


# --- The drills (--rolling, and tests/e2e/test_multinode_cluster.py) ------------------------------


def token(base: str) -> str:
    email = f"multinode-{uuid.uuid4().hex[:8]}@example.com"
    with httpx.Client(base_url=base, timeout=20) as client:
        response = client.post("/api/v1/auth/register", json={"email": email, "password": PASSWORD})
        assert response.status_code == 201, response.text
        response = client.post("/api/v1/auth/token", json={"email": email, "password": PASSWORD})
        assert response.status_code == 200, response.text
        return response.json()["access"]


def stored_titles(cluster: Cluster) -> Counter:
    return Counter(row[0] for row in cluster.sql("SELECT title FROM tasks_market_task"))


def rolling_restarts_and_a_kill(cluster: Cluster, *, rounds: int = 1, tail_seconds: float = 0) -> dict:
    """scripts/multinode.py --rolling: rolling restarts then a SIGKILL of the first web node under load."""
    rolling = rolling_restart(cluster, rounds=rounds)
    killed = kill_a_web_node(cluster, settle=max(tail_seconds, 3.0))
    return {"rolling": rolling, "kill": killed}


def rolling_restart(cluster: Cluster, *, rounds: int = 1) -> dict:
    proxy = cluster.proxy
    webs = cluster.webs()
    load = Load(proxy.base, token(proxy.base), max_seconds=120 * rounds + 60).start()
    try:
        wait_until(lambda: len(load.created) >= 20, "the load to get going", 30, 0.1)
        windows = []
        for round_ in range(1, rounds + 1):
            for node in webs:
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
                windows.append((round_, node.name, start, time.monotonic(), out_after, stopped_in))
        # Requests sent in the last window are still being answered: let them finish.
        after = time.monotonic()
        wait_until(lambda: any(a.at >= after for a in list(load.answers)), "one more answer", 30, 0.05)
    finally:
        load.stop()
    stored = {str(row[0]) for row in cluster.sql("SELECT id FROM tasks_market_task")}
    for round_, name, start, end, out_after, stopped_in in windows:
        answers, created = load.window(start, end)
        print(
            f"round {round_} {name}: restart {end - start:.1f} s (SIGTERM to DOWN {out_after:.1f} s, "
            f"to exit {stopped_in:.1f} s) requests={len(answers)} statuses[{status_counts(answers)}] "
            f"failures={len(failures(answers))} writes missing={len([t for t in created if t not in stored])}",
            flush=True,
        )
    everything = load.answers
    return {
        "answers": everything,
        "created": len(load.created),
        "missing": [task for task in load.created if task not in stored],
        "retries": proxy.retries(),
    }


def kill_a_web_node(cluster: Cluster, *, settle: float = 3.0, hold: bool = False) -> dict:
    """SIGKILL the first web node under load; restart it afterwards.

    Half the load's clients send each POST with an Idempotency-Key and retry it with the same key; the other
    half send none and never retry. Every POST is counted: at most one task each, exactly one for each 201
    and for each keyed POST once retried. With `hold` (a cluster on tests/e2e/multinode_settings.py) the node
    is killed while it holds the answers to one POST of each kind whose task it committed: the moment where a
    proxy that sends a request again to the other node doubles an unkeyed POST.
    """
    proxy = cluster.proxy
    node = cluster.webs()[0]
    bearer = token(proxy.base)
    load = Load(proxy.base, bearer, threads=4, unkeyed=2, retries=3, max_seconds=120).start()
    held: dict[str, str] = {}  # kind -> title
    senders: list[threading.Thread] = []
    try:
        wait_until(lambda: len(load.created) >= 20, "the load to get going", 30, 0.1)
        if hold:
            held, senders = held_posts(cluster, node, load)
        killed_at = node.kill()
        wait_until(lambda: proxy.server_states().get(node.name) == "DOWN", f"HAProxy to take {node.name} out", 30, 0.05)
        down_at = time.monotonic()
        settled = time.monotonic() + settle
        wait_until(lambda: time.monotonic() >= settled and len(load.created) >= 40, "load after the kill", 60, 0.1)
        for sender in senders:
            sender.join(timeout=60)
    finally:
        load.stop()
    answers = load.answers
    # The kill window: requests answered after the kill and sent before HAProxy took the node out.
    in_window = [a for a in answers if a.done >= killed_at and a.at < down_at]
    outside = [a for a in failures(answers) if a not in in_window]
    # A POST whose request died with the node holds its Idempotency-Key claim for 5 minutes
    # (core/http/idempotency.py): its retries get 409 idempotency_in_progress. Pass the 5 minutes, retry them.
    in_doubt = [key for key in load.unacknowledged]
    conflicted = {
        row[0]
        for row in cluster.sql(
            "SELECT key FROM core_idempotencykey WHERE response_status IS NULL AND key = ANY(%s)", list(load.titles)
        )
    }
    cluster.sql(
        "UPDATE core_idempotencykey SET locked_at = locked_at - interval '6 minutes' "
        "WHERE response_status IS NULL AND key = ANY(%s)",
        list(conflicted),
    )
    late = []
    with httpx.Client(base_url=proxy.base, headers={"Authorization": f"Bearer {bearer}"}, timeout=30) as client:
        for key in sorted(set(in_doubt) | conflicted):
            response = client.post("/api/v1/tasks", json=load.bodies[key], headers={"Idempotency-Key": key})
            late.append(Answer(time.monotonic(), "POST late retry", response.status_code, time.monotonic()))
            if response.status_code == 201:
                load.created[response.json()["id"]] = 0.0
    stored = {str(row[0]) for row in cluster.sql("SELECT id FROM tasks_market_task")}
    titles = stored_titles(cluster)
    node.start()
    node.wait_ready()
    proxy.wait_state(node.name, "UP")
    keyed = set(load.titles.values())
    unkeyed = {title: status for title, status in load.outcomes.items() if title not in keyed}
    return {
        "answers": answers + late,
        "out_after": down_at - killed_at,
        "in_window": in_window,
        "window_failures": failures(in_window),
        "outside_failures": outside,
        "late": late,
        "missing": [task for task in load.created if task not in stored],
        "lost": [key for key, title in load.titles.items() if titles[title] == 0],
        "doubled": [title for title in load.outcomes if titles[title] > 1],
        "posts": {"keyed": len(keyed), "unkeyed": len(unkeyed)},
        # Unkeyed POSTs that got no 201: each may have made its task (1) or not (0), never two.
        "unkeyed_unanswered": {title: (status, titles[title]) for title, status in unkeyed.items() if status != 201},
        # The POSTs the node held when it was killed: what the client got in the end, and the tasks made.
        "held": {kind: (load.outcomes[title], titles[title]) for kind, title in held.items()},
        "retries": proxy.retries(),
    }


def held_posts(cluster: Cluster, node: Node, load: Load) -> tuple[dict[str, str], list[threading.Thread]]:
    """A keyed and an unkeyed POST whose tasks `node` committed and whose answers it holds (for 10 s,
    tests/e2e/multinode_hold.py); the other web nodes are drained meanwhile so that the proxy sends both to
    `node`. Their titles by kind, and the threads waiting for their answers. Both are held within 8 s of
    each other, so both still are when the caller kills `node` right after."""
    others = [web for web in cluster.webs() if web is not node]
    held = {kind: f"Held copy {kind} {uuid.uuid4().hex[:13]}" for kind in ("keyed", "unkeyed")}
    tokens = {kind: f"held-{kind}-{uuid.uuid4().hex[:8]}" for kind in held}
    senders = [
        threading.Thread(
            target=load.post_one,
            args=(title,),
            kwargs={"keyed": kind == "keyed", "headers": {"X-Multinode-Hold": tokens[kind]}},
            daemon=True,
        )
        for kind, title in held.items()
    ]
    for web in others:
        cluster.proxy.set_state(web.name, "drain")
    try:
        for sender in senders:
            sender.start()
        markers = [node.var_dir / "held" / hold_token for hold_token in tokens.values()]
        wait_until(lambda: all(held_status(marker) for marker in markers), f"{node.name} to hold both", 8, 0.02)
    finally:
        for web in others:
            cluster.proxy.set_state(web.name, "ready")
    assert all(held_status(marker) == "201" for marker in markers), "a held POST made no task"
    return held, senders


def held_status(marker: Path) -> str:
    """The status of the answer a node holds, once it holds it."""
    try:
        return marker.read_text()
    except FileNotFoundError:
        return ""


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--rolling", type=int, default=0, help="rolling restarts under load, then a web node SIGKILL")
    parser.add_argument("--seconds", type=float, default=60, help="load seconds after the restarts (with --rolling)")
    parser.add_argument("--settings", default="config.settings.production")
    args = parser.parse_args()
    workdir = Path(tempfile.mkdtemp(prefix="multinode-"))
    with backing() as (database_url, redis_url):
        cluster = Cluster(workdir, database_url, redis_url, settings=args.settings, extra_env=dict(TEST_BEAT))
        try:
            cluster.prepare()
            cluster.override_rate_limit(f"{PROXY_HOST}/32", 10_000_000)  # the load below comes from here
            cluster.start()
            print(json.dumps(cluster.addresses(), indent=2), flush=True)
            if args.rolling:
                result = rolling_restarts_and_a_kill(cluster, rounds=args.rolling, tail_seconds=args.seconds)
                for name, outcome in result.items():
                    print(
                        f"{name}: requests={len(outcome['answers'])} statuses[{status_counts(outcome['answers'])}] "
                        f"failures={len(failures(outcome['answers']))} writes missing={len(outcome['missing'])} "
                        f"{outcome['retries']}",
                        flush=True,
                    )
                kill = result["kill"]
                print(
                    f"kill: DOWN after {kill['out_after']:.1f} s, kill-window requests={len(kill['in_window'])} "
                    f"failures={len(kill['window_failures'])} lost={len(kill['lost'])} doubled={len(kill['doubled'])}",
                    flush=True,
                )
            else:
                print("Running; Ctrl-C stops every node.", flush=True)
                while all(node.running() for node in cluster.nodes.values()):
                    time.sleep(1)
                print(cluster.log_tails())
        except KeyboardInterrupt:
            pass
        finally:
            cluster.stop()
            shutil.rmtree(workdir, ignore_errors=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
