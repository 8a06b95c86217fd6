"""The production rate-limit plumbing: one-round-trip counters, and overrides kept briefly in each process."""

from __future__ import annotations

import threading

import pytest
from django.conf import settings
from django.test import override_settings

from core.http import ratelimit
from core.http.ratelimit import CounterRedisCache, RateLimitCounterCache
from core.models import RateLimitOverride


@pytest.fixture
def counters():
    cache = CounterRedisCache(settings.REDIS_URL, {"KEY_PREFIX": "ops-test"})
    yield cache
    cache.clear()


def test_incr_counts_atomically_and_never_creates_a_key(counters):
    assert counters.add("hits", 1, 60)
    assert counters.incr("hits") == 2
    assert counters.incr("hits", 5) == 7
    assert counters.get("hits") == 7
    with pytest.raises(ValueError):
        counters.incr("missing")
    assert counters.get("missing") is None  # a counter without an expiry would never reset


@pytest.fixture
def ratelimit_counters():
    cache = RateLimitCounterCache(settings.REDIS_URL, {"KEY_PREFIX": "ops-test-rl"})
    yield cache
    cache.clear()


def redis_ttl(cache, key: str) -> int:
    full = cache.make_and_validate_key(key)
    return cache._cache.get_client(full).ttl(full)


def test_add_then_incr_counts_each_request_once_as_django_ratelimit_calls_them(ratelimit_counters):
    counters = ratelimit_counters
    assert counters.add("w", 1, 65) is True  # a new window: the count is 1, no incr follows
    assert 0 < redis_ttl(counters, "w") <= 65
    for expected in (2, 3, 4):
        assert counters.add("w", 1, 65) is False
        assert counters.incr("w") == expected  # answered from the add: counted once, not twice
    assert counters.get("w") == 4
    assert 0 < redis_ttl(counters, "w") <= 65  # the expiry is the window's, never pushed out


def test_add_zero_reads_without_counting_and_creates_an_expiring_zero(ratelimit_counters):
    counters = ratelimit_counters
    assert counters.add("r", 0, 30) is True
    assert counters.get("r") == 0 and 0 < redis_ttl(counters, "r") <= 30
    counters.add("r", 1, 30)
    assert counters.add("r", 0, 30) is False  # exists: django-ratelimit then reads it with get()
    assert counters.get("r") == 1
    with pytest.raises(ValueError):  # nothing was kept for an incr to answer from a read
        counters.incr("absent")
    assert counters.incr("r") == 2  # a plain incr after a read goes to Redis


def test_an_incr_is_answered_only_on_the_thread_that_counted(ratelimit_counters):
    counters = ratelimit_counters
    counters.add("t", 1, 60)
    counters.add("t", 1, 60)  # counted: 2, kept for this thread's incr
    seen = []
    other = threading.Thread(target=lambda: seen.append(counters.incr("t")))
    other.start()
    other.join()
    assert seen == [3]  # the other thread incremented in Redis
    assert counters.incr("t") == 2  # this thread's add answers its own incr
    assert counters.get("t") == 3


def test_one_redis_client_per_process_shared_by_threads_and_caches(ratelimit_counters):
    """Django builds a `redis.Redis` on every cache call and a pool per thread; here one of each per process."""
    other_cache = RateLimitCounterCache(settings.REDIS_URL, {"KEY_PREFIX": "ops-test-rl"})  # as another thread's
    clients = [ratelimit_counters._cache.get_client("k", write=True), other_cache._cache.get_client("j")]
    thread = threading.Thread(target=lambda: clients.append(ratelimit_counters._cache.get_client("k")))
    thread.start()
    thread.join()

    assert clients[0] is clients[1] is clients[2]
    assert other_cache.add("c", 1, 60) is True and ratelimit_counters.add("c", 1, 60) is False
    assert ratelimit_counters.incr("c") == 2  # the shared client counts as before


def test_only_integer_counters_are_accepted(ratelimit_counters):
    with pytest.raises(TypeError):
        ratelimit_counters.add("x", "text", 60)
    with pytest.raises(TypeError):
        ratelimit_counters.add("x", True, 60)


@pytest.mark.django_db
@override_settings(RATELIMIT_OVERRIDES_LOCAL_SECONDS=10)
def test_overrides_are_kept_in_the_process_and_a_saved_one_applies_at_once():
    ratelimit.forget_overrides()
    assert ratelimit.override_limit("203.0.113.9", "default") is None

    RateLimitOverride.objects.create(network="203.0.113.0/24", rule="*", limit=5000)  # save() forgets
    assert ratelimit.override_limit("203.0.113.9", "default") == 5000

    # A change that bypasses save() (as another process's would) is seen once the local copy lapses.
    RateLimitOverride.objects.update(limit=7000)
    assert ratelimit.override_limit("203.0.113.9", "default") == 5000
    ratelimit.forget_overrides()
    assert ratelimit.override_limit("203.0.113.9", "default") == 7000
