from __future__ import annotations

import threading
import time

import pytest

from core.ops import health

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


# --- Remembered readiness (core.ops.health.readiness; docs/operations.md#health-and-logs) -----------------------


@pytest.fixture
def remembered(settings):
    """Readiness remembered as in production (config.settings.test turns it off), from a clean slate."""
    settings.HEALTH_CHECK_INTERVAL_SECONDS = 1.0
    health.readiness_forget()
    yield
    health.readiness_forget()


def test_a_result_is_answered_again_within_its_interval_only(api, settings, remembered):
    assert api.get("/health").status_code == 200
    settings.CACHES = {
        "default": {"BACKEND": "django.core.cache.backends.redis.RedisCache", "LOCATION": "redis://127.0.0.1:9/0"}
    }

    assert api.get("/health").status_code == 200  # remembered: the cache was not touched
    time.sleep(settings.HEALTH_CHECK_INTERVAL_SECONDS)
    assert api.get("/health").status_code == 503


def test_while_one_probe_checks_the_others_answer_the_last_result_at_once(monkeypatch, settings, remembered):
    running, release, runs, answers = threading.Event(), threading.Event(), [], []

    def broker() -> None:
        runs.append(1)
        if len(runs) > 1:  # the second run finds the broker gone, and takes its time to say so
            running.set()
            release.wait(timeout=30)
            raise ConnectionError("broker gone")

    monkeypatch.setattr(health, "CHECKS", {"broker": broker})
    assert health.readiness() == {"broker": "ok"}
    time.sleep(settings.HEALTH_CHECK_INTERVAL_SECONDS)  # past the interval: the next probe checks again
    checking = threading.Thread(target=lambda: answers.append(health.readiness()))
    checking.start()
    assert running.wait(timeout=30)

    others = [health.readiness() for _ in range(20)]  # would wait, or check too, if not answered at once

    release.set()
    checking.join(timeout=30)
    assert others == [{"broker": "ok"}] * 20 and len(runs) == 2
    assert answers == [{"broker": "error: ConnectionError"}]
    assert health.readiness() == {"broker": "error: ConnectionError"}  # the new result, remembered
    assert len(runs) == 2
