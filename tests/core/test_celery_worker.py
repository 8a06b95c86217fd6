"""A real worker process consumes from the real Redis broker (no eager mode here)."""

from __future__ import annotations

import os
import subprocess
import sys
import time
import uuid
from pathlib import Path

import pytest
from django.conf import settings
from django.core.cache import cache

from config.celery_app import app

ROOT = Path(__file__).resolve().parents[2]


@pytest.fixture
def worker():
    env = {**os.environ, "DJANGO_SETTINGS_MODULE": "config.settings.test"}
    process = subprocess.Popen(
        [
            sys.executable,
            "-m",
            "celery",
            "-A",
            "config",
            "worker",
            "--pool=solo",
            "--loglevel=WARNING",
            "--without-gossip",
            "--without-mingle",
            "--without-heartbeat",
        ],
        cwd=ROOT,
        env=env,
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
    )
    yield process
    process.terminate()
    try:
        process.wait(timeout=20)
    except subprocess.TimeoutExpired:
        process.kill()


def test_a_worker_consumes_a_task_from_redis(worker):
    assert settings.CELERY_BROKER_URL.startswith("redis://")
    token = uuid.uuid4().hex

    app.send_task("core.tasks.ping", args=[token])  # send_task never runs eagerly

    deadline = time.monotonic() + 60
    while time.monotonic() < deadline and cache.get(f"ping:{token}") is None:
        assert worker.poll() is None, worker.stdout.read().decode()
        time.sleep(0.2)
    assert cache.get(f"ping:{token}") == "pong"
