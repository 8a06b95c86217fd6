"""The production rate-limit plumbing: one-round-trip counters, and overrides kept briefly in each process."""

from __future__ import annotations

import pytest
from django.conf import settings
from django.test import override_settings

from core import ratelimit
from core.models import RateLimitOverride
from core.ratelimit import CounterRedisCache


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
