"""Several nodes behind a real load balancer: scripts/multinode.py's cluster, started once for this module.

HAProxy (docs/haproxy.cfg) on 127.0.0.1 in front of web nodes on 127.0.0.2 and 127.0.0.3, two worker nodes
and two beat nodes, each `make serve` (scripts/serve.sh) with its own SERVE_ROLES, on the suite's
PostgreSQL (a database of its own) and Redis (database 15), with tests/e2e/multinode_settings.py. In order:

1. rate limits count per real client across both web nodes (HAProxy's X-Forwarded-For, TRUSTED_PROXIES);
   then Debian's Prometheus scrapes every web and worker node's exporter and answers a rate per node, a
   latency quantile and the workers' task counts; a write through one node is in the next open-list read
   through either node, whose kept pages were warm; images generated on either node are on the S3-compatible
   bucket both share (tests/support/s3_server.py, MEDIA_STORAGE=s3), and every image URL answers with its bytes;
2. a rolling restart under steady reads and idempotent writes fails no request and loses no write;
3. a web node SIGKILLed under load (clients with and without Idempotency-Key), while it holds the answers
   to POSTs it committed: HAProxy takes it out within its checks and replays only what is safe (a keyed
   POST, never an unkeyed one); only requests in flight in that window may fail, clients retrying with
   their key lose nothing, and no POST makes two tasks;
4. the active beat SIGKILLed: the standby takes the Redis lock and the one-second probe goes on, with no
   gap longer than the takeover and never two beats at once (the takeover time is printed);
5. a worker node SIGKILLed mid-task: the task comes back to the other node and is applied once; a worker
   started after none ran takes everything queued meanwhile.

The module's tests share one worker under `--dist loadgroup` (their ids end in `[multinode]`, which
tests/conftest.py groups). Each scenario prints one line in the run's summary. Longer runs on demand:
`scripts/testenv.py -- .venv/bin/python scripts/multinode.py --rolling 5 --seconds 120`.
"""

from __future__ import annotations

import importlib.util
import itertools
import logging
import subprocess
import sys
import time
import uuid
from collections import Counter

import httpx
import pytest
import redis
from celery import Celery

from tests.ops.observed_node import Prometheus
from tests.support.reporting import SCENARIO_PROPERTY
from tests.support.s3_server import s3_stand_in
from tools.load import PASSWORD
from tools.multinode import failures, status_counts, task_body
from tools.nodes import ROOT, wait_until

_spec = importlib.util.spec_from_file_location("multinode_script", ROOT / "scripts" / "multinode.py")
multinode = importlib.util.module_from_spec(_spec)
sys.modules[_spec.name] = multinode  # dataclasses look their module up there
_spec.loader.exec_module(multinode)
Cluster = multinode.Cluster
# The drills, shared with `scripts/multinode.py --rolling`.
token, rolling_restart, kill_a_web_node = multinode.token, multinode.rolling_restart, multinode.kill_a_web_node

pytestmark = pytest.mark.timeout(900)

# HAProxy's checks (docs/haproxy.cfg): `inter 1s fall 2`, `timeout check 2s`: a dead node is DOWN after two
# failed checks; a refused connection fails at once, so about 2 s, 4 s at the very most.
CHECK_WINDOW = 4.0
LIMITED_CLIENT, OTHER_CLIENT = "127.0.0.10", "127.0.0.11"
LIMITED = 6  # the limited client's override, on every rule


def scenario_line(request, name: str, requests: int, statuses: str, **effects) -> None:
    """One line in the run's summary (tests/support/reporting.py), like tests/e2e/conftest.py's `scenario`."""
    effect = " ".join(f"{key}={value}" for key, value in effects.items())
    line = f"{'multi':<5} {name:<24} requests={requests:<5} statuses[{statuses}] effects[{effect}]"
    print("\n" + line, flush=True)
    request.node.user_properties.append((SCENARIO_PROPERTY, line))


@pytest.fixture(scope="module", params=["multinode"])
def cluster(tmp_path_factory):
    logging.getLogger("httpx").setLevel(logging.WARNING)  # one line per request otherwise
    began = time.monotonic()
    workdir = tmp_path_factory.mktemp("multinode")
    # Media on one S3-compatible bucket every node shares (tests/support/s3_server.py, in this process).
    with multinode.backing() as (database_url, redis_url), s3_stand_in(bucket="multinode-media") as media:
        started = Cluster(
            workdir,
            database_url,
            redis_url,
            settings="tests.e2e.multinode_settings",
            extra_env={**multinode.TEST_BEAT, **media.env()},
        )
        started.media = media
        try:
            started.prepare()
            # Staff lift the limits for the load's address and set a small one for the limited client (the
            # admin's overrides; nodes read them at start).
            started.override_rate_limit(f"{multinode.PROXY_HOST}/32", 10_000_000)
            started.override_rate_limit(f"{LIMITED_CLIENT}/32", LIMITED)
            started.start()
            print(f"\ncluster up in {time.monotonic() - began:.0f} s: {started.addresses()['web']}", flush=True)
            yield started
        except BaseException:
            print(started.log_tails(40))
            raise
        finally:
            started.stop()


def test_rate_limits_count_per_real_client_across_nodes(cluster, request):
    proxy = cluster.proxy
    bearer = {"Authorization": f"Bearer {token(proxy.base)}"}
    before = {row["svname"]: int(row["stot"]) for row in proxy.stats()}

    def client(address: str) -> httpx.Client:
        # A fresh connection per request, so that round robin alternates the nodes.
        transport = httpx.HTTPTransport(local_address=address)
        return httpx.Client(base_url=proxy.base, transport=transport, headers=bearer, timeout=20)

    def limited_get(n: int) -> httpx.Response:
        # The client forges an X-Forwarded-For; HAProxy appends the address it really came from.
        with client(LIMITED_CLIENT) as limited:
            return limited.get("/api/v1/tasks", params={"scope": "open"}, headers={"X-Forwarded-For": f"203.0.113.{n}"})

    # Until the client was refused twice; a fixed window (a minute) may end on the way: counting starts over.
    answers = []
    while sum(status == 429 for status, _ in answers) < 2 and len(answers) < 4 * LIMITED:
        response = limited_get(len(answers))
        answers.append((response.status_code, response.headers.get("X-RateLimit-Remaining")))
    with client(OTHER_CLIENT) as other:
        other_response = other.get("/api/v1/tasks", params={"scope": "open"})
    after = {row["svname"]: int(row["stot"]) for row in proxy.stats()}
    per_node = {node.name: after[node.name] - before[node.name] for node in cluster.webs()}
    statuses = Counter(status for status, _ in answers) + Counter([other_response.status_code])
    scenario_line(
        request,
        "rate_limit_across_nodes",
        len(answers) + 1,
        " ".join(f"{s}x{n}" for s, n in sorted(statuses.items())),
        per_node="/".join(str(v) for v in per_node.values()),
        limited_remaining=",".join(str(r) for _, r in answers),
    )
    # One counter for the client whichever node answered (round robin alternates them): within a window each
    # request takes one off the remaining count, and the client is refused only once it reached 0.
    assert sum(status == 429 for status, _ in answers) == 2, answers
    assert all(int(remaining) <= LIMITED for status, remaining in answers if status == 200), answers
    for (status, remaining), (next_status, next_remaining) in itertools.pairwise(answers):
        if next_status == 200 and status == 200:
            assert int(next_remaining) in (int(remaining) - 1, LIMITED - 1), answers  # or a new window
        if next_status == 429:
            assert (status, remaining) in ((200, "0"), (429, "0")), answers
    assert all(count >= LIMITED // 2 for count in per_node.values()), per_node
    # Another client behind the same proxy has its own counter (the default rule's 300 a minute).
    assert other_response.status_code == 200
    assert int(other_response.headers["X-RateLimit-Limit"]) > LIMITED


def _value(result: list[dict]) -> float:
    return float(result[0]["value"][1]) if result else float("nan")


def test_prometheus_scrapes_both_web_nodes_and_the_workers(cluster, request, tmp_path):
    """Debian's Prometheus scrapes each web node's and each worker node's exporter (their own ports, not the
    proxy's), and answers a per-node request rate, a latency quantile and the workers' task counts."""
    metrics = cluster.addresses()["metrics"]
    webs = [metrics[node.name] for node in cluster.webs()]
    workers = [metrics[node.name] for node in cluster.of_role("worker")]
    prometheus = Prometheus(tmp_path, {"web": webs, "worker": workers})
    try:
        expected = len(webs) + len(workers)
        up = prometheus.wait_for("up", lambda r: len(r) == expected and all(_value([s]) == 1 for s in r))
        sent = Counter()
        with httpx.Client(base_url=cluster.proxy.base, timeout=20) as client:
            deadline = time.monotonic() + 5
            while time.monotonic() < deadline:  # through HAProxy, which alternates the nodes
                sent[client.get("/health").status_code] += 1
        rates = prometheus.wait_for(
            'sum by (instance) (rate(http_requests_total{route="health",status="200"}[10s]))',
            lambda r: len(r) == len(webs) and all(_value([s]) > 0 for s in r),
        )
        p95 = prometheus.wait_for(
            'histogram_quantile(0.95, sum by (le) (rate(http_request_duration_seconds_bucket{route="health"}[10s])))',
            lambda r: _value(r) > 0,
        )
        probes = prometheus.wait_for(
            'sum(celery_tasks_total{task="multinode.probe",state="succeeded"})', lambda r: _value(r) > 0
        )
    finally:
        prometheus.stop()
    scenario_line(
        request,
        "prometheus_scrape",
        sum(sent.values()),
        " ".join(f"{status}x{n}" for status, n in sorted(sent.items())),
        targets_up=len(up),
        health_rate_per_node="/".join(f"{_value([s]):.1f}" for s in rates),
        p95_ms=f"{_value(p95) * 1000:.1f}",
        probes_succeeded=f"{_value(probes):.0f}",
    )
    assert sorted(s["metric"]["job"] for s in up) == sorted(["web"] * len(webs) + ["worker"] * len(workers)), up
    assert sent == {200: sum(sent.values())}, sent
    assert {s["metric"]["instance"] for s in rates} == set(webs), rates
    assert all(_value([s]) > 0 for s in rates), rates
    assert 0 < _value(p95) < 10, p95
    assert _value(probes) > 0, probes


def _page_cache(address: str) -> Counter:
    """A web node's page_cache_total by result, from its own exporter."""
    found = Counter()
    for line in httpx.get(f"http://{address}/metrics", timeout=10).text.splitlines():
        if line.startswith("page_cache_total{"):
            result = line.split('result="', 1)[1].split('"', 1)[0]
            found[result] += float(line.rsplit(" ", 1)[1])
    return found


def test_a_write_through_one_node_is_in_the_next_read_through_either(cluster, request):
    """Each web node keeps open-list pages (core.db.pagecache): a task created or cancelled through one node is
    in (or out of) the very next read through each node, however warm their kept pages are."""
    proxy = cluster.proxy
    bearer = {"Authorization": f"Bearer {token(proxy.base)}"}
    metrics = cluster.addresses()["metrics"]
    webs = [node.name for node in cluster.webs()]
    kept_before = {name: _page_cache(metrics[name]) for name in webs}
    served_before = {row["svname"]: int(row["stot"]) for row in proxy.stats()}
    stale, reads, writes = [], 0, 0

    def call(method: str, path: str, **kwargs) -> httpx.Response:
        # A fresh connection per request, so that round robin alternates the nodes.
        with httpx.Client(base_url=proxy.base, headers=bearer, timeout=20) as client:
            response = client.request(method, path, **kwargs)
        assert response.status_code < 300, (method, path, response.status_code, response.text)
        return response

    def listed() -> set[str]:
        nonlocal reads
        reads += 1
        page = call("GET", "/api/v1/tasks", params={"scope": "open", "limit": 100}).json()
        return {item["id"] for item in page["items"]}

    for _ in range(4):
        listed()  # both nodes keep the page now
    for n in range(8):
        task_id = call("POST", "/api/v1/tasks", json=task_body(f"cross-node {n}")).json()["id"]
        stale += [("created", n, i) for i in range(2) if task_id not in listed()]  # one read on each node
        call("POST", f"/api/v1/tasks/{task_id}/cancel")
        stale += [("cancelled", n, i) for i in range(2) if task_id in listed()]
        writes += 2
    # Reads with no write of ours between them, until each node served one from its kept page: a write
    # elsewhere in the cluster (a job, a late retry of the test before) can move the stamp between the
    # warm-up's reads, so one pair of them is not always enough.
    for _ in range(12):
        if all((_page_cache(metrics[name]) - kept_before[name])["hit"] > 0 for name in webs):
            break
        listed()
    served = {row["svname"]: int(row["stot"]) - served_before[row["svname"]] for row in proxy.stats()}
    kept = {name: _page_cache(metrics[name]) - kept_before[name] for name in webs}
    scenario_line(
        request,
        "pages_across_nodes",
        reads + writes,
        f"2xx x{reads + writes}",
        stale_reads=len(stale),
        per_node="/".join(str(served.get(name, 0)) for name in webs),
        kept_hits="/".join(f"{kept[name]['hit']:.0f}" for name in webs),
    )
    assert stale == []
    assert all(served.get(name, 0) >= reads // 3 for name in webs), served
    # The pages were kept and served on both nodes: the reads above went through the cache.
    assert all(kept[name]["hit"] > 0 and kept[name]["miss"] > 0 for name in webs), kept


def test_every_generated_image_url_answers_whichever_node_drew_it(cluster, request):
    """Images are stored on the bucket both web nodes share (MEDIA_STORAGE=s3): each image generated through
    the proxy, on either node, is in the bucket, and its URL answers 200 with the same PNG bytes."""
    proxy = cluster.proxy
    # An account with credits, made as an operator makes one (`manage.py create_user --credits`).
    email = f"media-{uuid.uuid4().hex[:8]}@example.com"
    made = subprocess.run(
        [sys.executable, "manage.py", "create_user", email, "--password", PASSWORD, "--credits", "6"],
        cwd=ROOT,
        env={**cluster.env, "VAR_DIR": str(cluster.workdir / "operator-var")},
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert made.returncode == 0, made.stdout + made.stderr
    signed_in = httpx.post(f"{proxy.base}/api/v1/auth/token", json={"email": email, "password": PASSWORD}, timeout=20)
    assert signed_in.status_code == 200, signed_in.text
    bearer = {"Authorization": f"Bearer {signed_in.json()['access']}"}
    served_before = {row["svname"]: int(row["stot"]) for row in proxy.stats()}
    generated = []
    for n in range(6):  # one credit each with the local model
        # A fresh connection per request, so that round robin alternates the nodes.
        with httpx.Client(base_url=proxy.base, headers=bearer, timeout=30) as client:
            body = {"prompt": f"shared media {n}", "conversation_id": str(uuid.uuid4())}
            response = client.post("/api/v1/allmodelchat/generate/image", json=body)
        assert response.status_code == 200, response.text
        generated.append(response.json()["url"])
    served = {row["svname"]: int(row["stot"]) - served_before[row["svname"]] for row in proxy.stats()}
    fetched = Counter()
    for url in generated:
        image = httpx.get(url, timeout=10)
        fetched[image.status_code] += 1
        key = url.removeprefix(f"{cluster.media.endpoint_url}/{cluster.media.bucket}/")
        assert key.startswith("generated/") and key.endswith(".png"), url
        assert image.status_code == 200, (url, image.status_code)
        assert image.content.startswith(b"\x89PNG") and image.content == cluster.media.object_bytes(key)
    scenario_line(
        request,
        "shared_media",
        2 * len(generated),
        " ".join(f"{s}x{n}" for s, n in sorted(fetched.items())),
        per_node="/".join(str(served.get(node.name, 0)) for node in cluster.webs()),
        in_bucket=len(cluster.media.keys("generated/")),
    )
    assert all(served.get(node.name, 0) >= 2 for node in cluster.webs()), served  # both nodes drew some
    assert fetched == {200: len(generated)}


def test_a_rolling_restart_behind_haproxy_fails_no_request(cluster, request):
    result = rolling_restart(cluster)
    everything = result["answers"]
    scenario_line(
        request,
        "rolling_restart",
        len(everything),
        status_counts(everything),
        failures=len(failures(everything)),
        writes_acknowledged=result["created"],
        writes_missing=len(result["missing"]),
    )
    print(result["retries"], flush=True)
    assert failures(everything) == [], failures(everything)[:20]
    assert result["missing"] == []
    assert {a.status for a in everything} <= {200, 201}, status_counts(everything)


def test_a_web_node_killed_under_load_is_taken_out_and_no_post_is_applied_twice(cluster, request):
    result = kill_a_web_node(cluster, hold=True)
    answers = result["answers"]
    unanswered = result["unkeyed_unanswered"]
    scenario_line(
        request,
        "web_node_sigkill",
        len(answers),
        status_counts(answers),
        taken_out_s=f"{result['out_after']:.1f}",
        kill_window_requests=len(result["in_window"]),
        kill_window_failures=len(result["window_failures"]),
        late_retries=len(result["late"]),
        posts="keyed:{keyed}/unkeyed:{unkeyed}".format(**result["posts"]),
        held="/".join(f"{kind}:{status}:{tasks}" for kind, (status, tasks) in sorted(result["held"].items())),
        unkeyed_unanswered=",".join(f"{status}:{tasks}" for status, tasks in unanswered.values()) or "none",
        writes_missing=len(result["missing"]),
        writes_lost=len(result["lost"]),
        writes_doubled=len(result["doubled"]),
    )
    print(result["retries"], flush=True)
    assert result["out_after"] <= CHECK_WINDOW, result["out_after"]
    assert result["outside_failures"] == [], result["outside_failures"][:20]
    assert min(result["posts"].values()) >= 20, result["posts"]
    # Every 201 has its task; every keyed POST has one once its client retried, the late retries included.
    assert result["missing"] == [] and result["lost"] == []
    assert all(a.status in (200, 201) for a in result["late"]), result["late"]
    # No POST made two tasks, keyed or not: the proxy replays a POST only when it carries an Idempotency-Key.
    assert result["doubled"] == [], result["doubled"][:20]
    # An unkeyed POST that got no 201 made its task or not, never two (listed in the summary line).
    assert all(tasks in (0, 1) for _, tasks in unanswered.values()), unanswered
    # The node died holding the answers to two POSTs whose tasks it had committed: the keyed one was sent
    # again (by HAProxy, or by its client after a 502) and answered from the stored response; the unkeyed
    # one was not sent again, and its client got no 201 for the task that exists.
    assert result["held"]["keyed"] == (201, 1), result["held"]
    assert result["held"]["unkeyed"][1] == 1 and result["held"]["unkeyed"][0] != 201, result["held"]


def probe_runs(client: redis.Redis) -> list[tuple[float, str, str]]:
    runs = []
    for raw in client.lrange("multinode:probe", 0, -1):
        at, origin, worker = raw.decode().split(" ", 2)
        runs.append((float(at), origin, worker))
    return sorted(runs)


def test_the_standby_beat_takes_over_when_the_active_one_is_killed(cluster, request):
    client = redis.Redis.from_url(cluster.redis_url)
    beats = cluster.of_role("beat")
    active = wait_until(
        lambda: next((b for b in beats if "Acquired lock" in b.log_text()), None), "a beat to take the lock", 60, 0.2
    )
    standby = next(b for b in beats if b is not active)
    wait_until(lambda: len(probe_runs(client)) >= 3, "three probe runs", 60, 0.2)
    assert "Acquired lock" not in standby.log_text(), "both beats hold the lock"
    old_origins = {origin for _, origin, _ in probe_runs(client)}
    assert len(old_origins) == 1, old_origins  # one beat schedules

    killed_wall = time.time()
    active.kill()

    def new_runs() -> list:
        return [run for run in probe_runs(client) if run[1] not in old_origins]

    wait_until(lambda: len(new_runs()) >= 3, "the standby's probe runs", 60, 0.2)
    takeover = new_runs()[0][0] - killed_wall
    runs = [run for run in probe_runs(client) if run[0] >= killed_wall - 10]
    gaps = [b[0] - a[0] for a, b in itertools.pairwise(runs)]
    origins = [origin for _, origin, _ in runs]
    switches = sum(1 for a, b in itertools.pairwise(origins) if a != b)
    bound = (
        int(multinode.TEST_BEAT["BEAT_LOCK_TIMEOUT_SECONDS"])
        + 2 * int(multinode.TEST_BEAT["BEAT_MAX_INTERVAL_SECONDS"])
        + 1
    )
    scenario_line(
        request,
        "beat_failover",
        len(runs),
        f"probe_runs x{len(runs)}",
        takeover_s=f"{takeover:.1f}",
        bound_s=bound,
        longest_gap_s=f"{max(gaps):.1f}",
        shortest_gap_s=f"{min(gaps):.2f}",
        sender_switches=switches,
    )
    # The standby took over once, within the lock's timeout plus its retry interval (and one period).
    assert switches == 1, origins
    assert "Acquired lock" in standby.log_text()
    assert takeover <= bound and max(gaps) <= bound, (takeover, gaps)
    # Never two at once: one-second runs never come closer than half a second.
    assert min(gaps) >= 0.5, gaps
    active.start()  # back as the standby
    cluster.wait_node(active)


def test_a_worker_node_killed_mid_task_hands_it_to_the_other_and_a_late_worker_drains_the_queue(cluster, request):
    client = redis.Redis.from_url(cluster.redis_url)
    app = Celery(broker=cluster.redis_url, set_as_current=False)  # the in-process tests keep config.celery_app
    workers = {node.env["CELERY_NODE_NAME"]: node for node in cluster.of_role("worker")}
    key = uuid.uuid4().hex
    app.send_task("multinode.slow_apply", args=[key, 4])
    started_key = f"multinode:started:{key}"
    wait_until(lambda: client.llen(started_key) >= 1, "the slow task to start", 60, 0.1)
    first = client.lindex(started_key, 0).decode()
    workers[first].kill()  # mid-task: its message is unacknowledged
    killed_at = time.monotonic()
    wait_until(lambda: client.get(f"multinode:applied:{key}"), "the task redelivered and applied", 90, 0.2)
    redelivered_in = time.monotonic() - killed_at
    starts = [raw.decode() for raw in client.lrange(started_key, 0, -1)]
    applied_by = client.get(f"multinode:applied:{key}").decode()
    effects = int(client.get(f"multinode:effects:{key}"))

    # Now no worker at all: the other stops too, tasks are queued, then one worker node starts.
    second = next(node for name, node in workers.items() if name != first)
    second.stop()
    keys = [uuid.uuid4().hex for _ in range(10)]
    for queued in keys:
        app.send_task("multinode.slow_apply", args=[queued, 0])
    assert not any(client.get(f"multinode:applied:{k}") for k in keys)
    workers[first].start()
    cluster.wait_node(workers[first])
    wait_until(lambda: all(client.get(f"multinode:applied:{k}") for k in keys), "the queued tasks", 90, 0.2)
    late_effects = [int(client.get(f"multinode:effects:{k}")) for k in keys]
    scenario_line(
        request,
        "worker_node_sigkill",
        1 + len(keys),
        f"tasks x{1 + len(keys)}",
        started_on="+".join(starts),
        applied_by=applied_by,
        redelivered_s=f"{redelivered_in:.1f}",
        effects=effects,
        queued_while_down=len(keys),
        drained=sum(late_effects),
    )
    assert starts == [first, applied_by] and applied_by != first, starts
    assert effects == 1
    assert late_effects == [1] * len(keys)
    second.start()
    cluster.wait_node(second)
