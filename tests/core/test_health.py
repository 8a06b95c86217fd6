from __future__ import annotations

import pytest

pytestmark = pytest.mark.django_db


def test_health_checks_database_cache_and_broker(api):
    response = api.get("/health")

    assert response.status_code == 200
    assert response.json() == {"status": "ok", "checks": {"database": "ok", "cache": "ok", "broker": "ok"}}


def test_health_is_503_when_the_cache_is_down(api, settings):
    settings.CACHES = {
        "default": {"BACKEND": "django.core.cache.backends.redis.RedisCache", "LOCATION": "redis://127.0.0.1:9/0"}
    }

    response = api.get("/health")

    assert response.status_code == 503
    body = response.json()
    assert body["status"] == "error"
    assert body["checks"]["cache"].startswith("error")
    assert body["checks"]["database"] == "ok"
