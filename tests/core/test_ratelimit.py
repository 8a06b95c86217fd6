from __future__ import annotations

import threading
import time
from types import SimpleNamespace

import django_ratelimit.core
import pytest
from django.db import connection

import core.http.ratelimit
from accounts.models import User
from core.http.ratelimit import classify
from core.http.ratelimit_rules import RULES
from core.models import RateLimitOverride
from tests.conftest import HttpsAPIClient
from tests.support.ratelimit import bucket_window, one_window

pytestmark = pytest.mark.django_db

RATE_LIMITED_BODY = {"detail": "Rate limit exceeded. Try again later.", "code": "rate_limited"}


@pytest.mark.parametrize(
    ("method", "path", "bucket", "limit", "period"),
    [
        ("POST", "/api/v1/tasks", "POST /api/v1/tasks", 60, 60),
        ("GET", "/api/v1/tasks", "/api/v1/tasks", 300, 60),
        ("POST", "/api/v1/tasks/1/bids", "/api/v1/tasks", 300, 60),
        ("POST", "/api/v1/webhooks/payments", "/api/v1/webhooks", 100, 60),
        ("GET", "/api/v1/webhooks/subscriptions", "/api/v1/webhooks", 100, 60),
        ("POST", "/api/v1/brief/generate", "/api/v1/brief/generate", 10, 3600),
        ("GET", "/api/v1/brief/suggestions", "/api/v1/brief/suggestions", 60, 3600),
        ("POST", "/api/v1/signature/tagline", "/api/v1/signature/tagline", 10, 3600),
        ("POST", "/api/v1/signature/scrape-website", "/api/v1/signature/scrape-website", 5, 3600),
        ("POST", "/api/v1/auth/register", "/api/v1/auth/register", 10, 3600),
        ("GET", "/api/v1/brands/x/competitors", "/api/v1/brands", 300, 60),
        ("PATCH", "/api/v1/brands/x", "/api/v1/brands", 300, 60),
        ("GET", "/admin/", "/admin", 300, 60),
    ],
)
def test_buckets(method, path, bucket, limit, period):
    found_bucket, rule = classify(method, path)

    assert (found_bucket, rule.limit, rule.period) == (bucket, limit, period)


@pytest.mark.parametrize(
    ("method", "path"),
    [
        ("GET", "/health"),
        ("GET", "/docs"),
        ("GET", "/redoc"),
        ("GET", "/openapi.json"),
        ("GET", "/static/x.js"),
        ("OPTIONS", "/api/v1/tasks"),
    ],
)
def test_exempt_paths(method, path):
    assert classify(method, path) is None


def test_the_301st_request_in_a_window_is_429(api):
    with one_window(bucket_window(RULES["default"])):
        statuses = [api.get("/api/v1/nothing-here").status_code for _ in range(300)]
        last = api.get("/api/v1/nothing-here")

    assert statuses == [404] * 300
    assert last.status_code == 429
    assert last.json() == RATE_LIMITED_BODY
    assert int(last["Retry-After"]) >= 1
    assert last["X-RateLimit-Limit"] == "300"
    assert last["X-RateLimit-Remaining"] == "0"
    assert int(last["X-RateLimit-Reset"]) > time.time()


def test_reset_and_retry_after_point_to_when_the_count_starts_over(api, monkeypatch):
    """In a window's last second too: a client that comes back at X-RateLimit-Reset is counted afresh."""
    RateLimitOverride.objects.create(network="127.0.0.1", rule="default", limit=1)
    clock = SimpleNamespace(now=bucket_window(RULES["default"])() - 0.5, monotonic=time.monotonic)
    clock.time = lambda: clock.now  # the limiter's and django-ratelimit's clock, held in the last second
    monkeypatch.setattr(django_ratelimit.core, "time", clock)
    monkeypatch.setattr(core.http.ratelimit, "time", clock)

    assert api.get("/api/v1/nothing-here").status_code == 404
    refused = api.get("/api/v1/nothing-here")
    assert refused.status_code == 429
    assert int(refused["X-RateLimit-Reset"]) == clock.now + 0.5
    assert refused["Retry-After"] == "1"
    clock.now = int(refused["X-RateLimit-Reset"])
    assert api.get("/api/v1/nothing-here").status_code == 404


def test_counted_responses_carry_the_headers(api):
    with one_window(bucket_window(RULES["default"])):
        first = api.get("/api/v1/auth/api-keys")  # 401, still counted
        second = api.post("/api/v1/auth/token", {}, format="json")  # 422, same bucket

    assert first.status_code == 401
    assert first["X-RateLimit-Limit"] == "300"
    assert first["X-RateLimit-Remaining"] == "299"
    assert second["X-RateLimit-Remaining"] == "298"
    assert abs(int(first["X-RateLimit-Reset"]) - int(second["X-RateLimit-Reset"])) <= 1


def test_a_client_registers_ten_accounts_an_hour(api):
    """Each account comes with free credits: the eleventh registration of the hour is refused, creates
    nothing, and another client still registers (docs/decisions.md#rate-limits)."""
    other = HttpsAPIClient(REMOTE_ADDR="10.1.2.3")
    body = {"password": "correct horse battery"}
    with one_window(bucket_window(RULES["auth_register"]), bucket_window(RULES["auth_register"], "10.1.2.3")):
        created = [api.post("/api/v1/auth/register", {**body, "email": f"u{n}@example.com"}) for n in range(10)]
        refused = api.post("/api/v1/auth/register", {**body, "email": "u10@example.com"})
        elsewhere = other.post("/api/v1/auth/register", {**body, "email": "other@example.com"})

    assert [r.status_code for r in created] == [201] * 10
    assert created[0]["X-RateLimit-Limit"] == "10" and created[-1]["X-RateLimit-Remaining"] == "0"
    assert refused.status_code == 429 and refused.json() == RATE_LIMITED_BODY
    assert not User.objects.filter(email="u10@example.com").exists()
    assert elsewhere.status_code == 201


def test_buckets_are_separate(api):
    with one_window(bucket_window(RULES["signature_scrape_website"])):
        for _ in range(5):
            api.post("/api/v1/signature/scrape-website", {}, format="json")

        assert api.post("/api/v1/signature/scrape-website", {}, format="json").status_code == 429
    assert api.post("/api/v1/signature/tagline", {}, format="json").status_code != 429
    assert api.get("/api/v1/auth/api-keys").status_code == 401


def test_clients_are_separate(api):
    other = HttpsAPIClient(REMOTE_ADDR="10.1.2.3")
    with one_window(bucket_window(RULES["signature_scrape_website"])):  # else 127.0.0.1 may not be at its cap
        for _ in range(5):
            api.post("/api/v1/signature/scrape-website", {}, format="json")

        assert other.post("/api/v1/signature/scrape-website", {}, format="json").status_code != 429


def test_exempt_paths_have_no_headers_and_are_not_counted(api):
    for _ in range(3):
        response = api.get("/health")
        assert "X-RateLimit-Limit" not in response
    options = api.options("/api/v1/auth/token")
    assert "X-RateLimit-Limit" not in options


def test_forwarded_for_is_believed_only_from_trusted_proxies(api, settings):
    import ipaddress

    with one_window(bucket_window(RULES["signature_scrape_website"])):
        for _ in range(5):
            api.post("/api/v1/signature/scrape-website", {}, format="json", HTTP_X_FORWARDED_FOR="203.0.113.9")
        # Untrusted peer: the header is ignored, so all five counted against 127.0.0.1.
        assert api.post("/api/v1/signature/scrape-website", {}, format="json").status_code == 429

    settings.TRUSTED_PROXIES = [ipaddress.ip_network("127.0.0.1/32")]
    via_proxy = api.post(
        "/api/v1/signature/scrape-website", {}, format="json", HTTP_X_FORWARDED_FOR="198.51.100.7, 127.0.0.1"
    )
    assert via_proxy.status_code != 429
    assert via_proxy["X-RateLimit-Remaining"] == "4"


def test_staff_override_raises_a_limit(api):
    RateLimitOverride.objects.create(network="127.0.0.0/8", rule="signature_scrape_website", limit=8)

    with one_window(bucket_window(RULES["signature_scrape_website"])):
        statuses = [api.post("/api/v1/signature/scrape-website", {}, format="json").status_code for _ in range(9)]

    assert 429 not in statuses[:8]
    assert statuses[8] == 429


@pytest.mark.django_db(transaction=True)
def test_concurrent_requests_let_exactly_the_cap_through():
    RateLimitOverride.objects.create(network="127.0.0.1", rule="default", limit=7)
    barrier = threading.Barrier(25)
    statuses: list[int] = []
    lock = threading.Lock()

    def call():
        client = HttpsAPIClient()
        barrier.wait()
        try:
            status = client.get("/api/v1/nothing-here").status_code
        finally:
            connection.close()
        with lock:
            statuses.append(status)

    threads = [threading.Thread(target=call) for _ in range(25)]
    with one_window(bucket_window(RULES["default"])):
        for thread in threads:
            thread.start()
        for thread in threads:
            thread.join()

    assert statuses.count(404) == 7
    assert statuses.count(429) == 18


# --- The tests' own window pinning (tests/support/ratelimit.py) --------------------------------------------


def test_one_window_waits_for_the_next_window_when_too_little_of_this_one_is_left():
    end = time.time() + 0.3

    def window_end() -> float:
        return end if time.time() < end else end + 60

    with one_window(window_end, room=1.0):
        started = time.time()

    assert started >= end


def test_one_window_fails_a_block_that_crossed_the_end_of_a_window():
    end = [time.time() + 60]
    window = one_window(lambda: end[0])

    with pytest.raises(AssertionError, match="crossed the end of a rate-limit window"), window:
        end[0] += 60  # the window ended while the block ran

    window = one_window(lambda: end[0])
    with pytest.raises(AssertionError, match="the count started over") as failed, window:
        end[0] += 60
        raise AssertionError("the count started over")
    assert "crossed the end of a rate-limit window" in failed.value.__notes__[0]
