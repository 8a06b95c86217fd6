"""The rate limit holds across web processes: N concurrent requests against a cap of L let exactly L through."""

from __future__ import annotations

import json
import threading

import httpx
import pytest

from core.http.ratelimit import RULES
from core.models import RateLimitOverride
from tests.conftest import jwt_for
from tests.ops.conftest import PROXY, gunicorn, stop
from tests.support.ratelimit import bucket_window, one_window

CAP = 10
REQUESTS = 40
WORKERS = 4


@pytest.mark.timeout(180)
@pytest.mark.django_db(transaction=True)
def test_four_web_processes_let_exactly_the_cap_through(alice, tmp_path):
    RateLimitOverride.objects.create(network="127.0.0.1/32", rule="*", limit=CAP, reason="ops test: a small cap")
    headers = {**PROXY, "Authorization": f"Bearer {jwt_for(alice)}"}

    with gunicorn(tmp_path, workers=WORKERS, threads=2) as (base, server, output):
        start = threading.Barrier(REQUESTS)
        responses: list[httpx.Response] = []
        lock = threading.Lock()

        def call() -> None:
            with httpx.Client(timeout=30) as client:  # one connection each, all opened at once
                start.wait()
                response = client.get(f"{base}/api/v1/tasks?scope=open", headers=headers)
            with lock:
                responses.append(response)

        threads = [threading.Thread(target=call) for _ in range(REQUESTS)]
        with one_window(bucket_window(RULES["tasks"]), room=8.0):  # the burst is counted in one fixed window
            for thread in threads:
                thread.start()
            for thread in threads:
                thread.join()
        stop(server)
        log = output.text()

    statuses = sorted(r.status_code for r in responses)
    assert statuses == [200] * CAP + [429] * (REQUESTS - CAP), statuses
    # Every admitted request saw its own count: the counter moved atomically across processes.
    remaining = sorted(int(r.headers["X-RateLimit-Remaining"]) for r in responses if r.status_code == 200)
    assert remaining == list(range(CAP)), remaining
    for refused in (r for r in responses if r.status_code == 429):
        assert refused.json() == {"detail": "Rate limit exceeded. Try again later.", "code": "rate_limited"}
        assert int(refused.headers["Retry-After"]) >= 1
        assert refused.headers["X-RateLimit-Remaining"] == "0"

    # The requests really were spread over several gunicorn processes (the access log names each one).
    access = [json.loads(line) for line in log.splitlines() if '"gunicorn.access"' in line]
    served_by = {entry["pid"] for entry in access if entry["path"] == "/api/v1/tasks"}
    assert len(served_by) > 1, f"all {REQUESTS} requests were served by one process: {served_by}"
    # Each access line is JSON with the request id the client got back.
    assert {entry["request_id"] for entry in access if entry["path"] == "/api/v1/tasks"} == {
        r.headers["X-Request-ID"] for r in responses
    }


@pytest.mark.timeout(120)
@pytest.mark.django_db(transaction=True)
def test_gunicorn_itself_believes_no_forwarded_header(tmp_path):
    """Only core.http.middleware, from TRUSTED_PROXIES, decides that a request came over TLS."""
    with gunicorn(tmp_path, workers=1, trusted_proxies="") as (base, _server, _output):
        response = httpx.get(f"{base}/health", headers=PROXY)
    assert (response.status_code, response.json()["code"]) == (403, "https_required")
