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


@pytest.fixture
def draining_node(settings, tmp_path):
    settings.VAR_DIR = tmp_path
    (tmp_path / "draining").touch()  # what scripts/supervise.py does on SIGTERM


def test_readiness_fails_while_the_node_drains(api, draining_node):
    response = api.get("/health")

    assert response.status_code == 503
    assert response.json()["status"] == "error"
    assert set(response.json()["checks"].values()) == {"error: draining"}


def test_liveness_stays_200_while_the_node_drains(api, draining_node):
    response = api.get("/health", {"probe": "live"})

    assert response.status_code == 200
    assert response.json()["status"] == "ok"


def test_readiness_is_200_again_once_the_drain_file_is_gone(api, settings, tmp_path):
    settings.VAR_DIR = tmp_path

    assert api.get("/health", {"probe": "ready"}).status_code == 200


def test_an_unknown_probe_is_422(api):
    response = api.get("/health", {"probe": "deep"})

    assert response.status_code == 422
    assert response.json()["detail"][0]["loc"] == ["query", "probe"]
