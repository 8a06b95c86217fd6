"""Prometheus scrapes a `make serve` node's web and worker exporters, and its HTTP API answers a request rate,
a latency quantile, the Celery task counts and the queue depth (docs/operations.md#metrics-and-traces).

The exporters listen on ports of their own, never on the public one: /metrics on the API's port is a 404.
`Prometheus` takes any list of targets; a multi-node run passes each web node and worker.
"""

from __future__ import annotations

import math

import httpx
import pytest

from tests.ops.observed_node import Prometheus, traffic

pytestmark = [pytest.mark.e2e, pytest.mark.timeout(600)]


def _value(result: list[dict]) -> float:
    return float(result[0]["value"][1]) if result else math.nan


def test_prometheus_scrapes_the_web_and_worker_and_answers_rate_and_quantile(observed_node, capsys):
    node = observed_node
    # Not public: the API's own port has no /metrics (the load balancer forwards only that port).
    assert httpx.get(node.server.base_url + "/metrics", verify=False).status_code == 404
    raw = httpx.get(f"http://{node.web_metrics}/metrics").text
    assert "http_request_duration_seconds_bucket" in raw

    prometheus = Prometheus(node.workdir, {"web": [node.web_metrics], "worker": [node.worker_metrics]})
    try:
        up = prometheus.wait_for("up", lambda r: len(r) == 2 and all(_value([s]) == 1 for s in r))
        assert sorted((s["metric"]["job"], _value([s])) for s in up) == [("web", 1.0), ("worker", 1.0)], up
        sent = traffic(node, seconds=5)

        rate = prometheus.wait_for(
            'sum(rate(http_requests_total{route="health",status="200"}[10s]))', lambda r: _value(r) > 0
        )
        p95 = prometheus.wait_for(
            'histogram_quantile(0.95, sum by (le) (rate(http_request_duration_seconds_bucket{route="health"}[10s])))',
            lambda r: _value(r) > 0,
        )
        db = prometheus.wait_for("sum(db_query_duration_seconds_count)", lambda r: _value(r) > 0)
        cache = prometheus.wait_for("sum(cache_operation_duration_seconds_count)", lambda r: _value(r) > 0)
        tasks = prometheus.wait_for(
            'sum(celery_tasks_total{task="accounts.tasks.password_reset_mail",state="succeeded"})',
            lambda r: _value(r) >= sent["reset"],
        )
        task_p50 = prometheus.query(
            "histogram_quantile(0.5, sum by (le) (rate(celery_task_duration_seconds_bucket[30s])))"
        )
        queue = prometheus.wait_for("celery_queue_length", lambda r: len(r) >= 1)
        rules = prometheus.api.get("/api/v1/rules").json()["data"]["groups"]
    finally:
        prometheus.stop()

    with capsys.disabled():
        print(
            f"\n[metrics] sent {sent}; Prometheus: rate(health 200)={_value(rate):.2f}/s, "
            f"p95(health)={_value(p95) * 1000:.1f} ms, db queries={_value(db):.0f}, cache calls={_value(cache):.0f}, "
            f"password_reset_mail succeeded={_value(tasks):.0f}, task p50={_value(task_p50) * 1000:.1f} ms, "
            f"queue depth={[(s['metric']['queue'], s['value'][1]) for s in queue]}, "
            f"alert rules loaded={sum(len(g['rules']) for g in rules)}"
        )
    assert _value(rate) > 0, rate
    assert 0 < _value(p95) < 10, p95
    assert _value(db) > 0 and _value(cache) > 0
    assert _value(tasks) >= sent["reset"] > 0, (tasks, sent)
    assert {s["metric"]["queue"] for s in queue} >= {"celery"}, queue
    assert rules, "docs/alerts.yml was not loaded"
