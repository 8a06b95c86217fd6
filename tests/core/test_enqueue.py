"""core.enqueue: a task queued by its name is sent once the transaction commits, and a stopped broker
costs one WARNING naming the task, never an error for the caller."""

from __future__ import annotations

import logging
import uuid

import pytest
from django.core.cache import cache
from django.db import transaction

from config.celery_app import app
from core.enqueue import enqueue_after_commit


@pytest.fixture
def broker_down(settings):
    """Celery not eager and its broker unreachable, as when the broker is stopped."""
    keys = ("task_always_eager", "broker_url", "broker_connection_timeout", "broker_connection_max_retries")
    saved = {key: app.conf[key] for key in keys}
    settings.CELERY_TASK_ALWAYS_EAGER = False
    app.conf.update(
        task_always_eager=False,
        broker_url="redis://127.0.0.1:9/0",
        broker_connection_timeout=1,
        broker_connection_max_retries=1,
    )
    app._pool = None
    app.amqp._producer_pool = None
    yield
    app.conf.update(saved)
    app._pool = None
    app.amqp._producer_pool = None


@pytest.mark.django_db(transaction=True)
def test_the_task_is_sent_by_name_after_commit():
    token = uuid.uuid4().hex

    with transaction.atomic():
        enqueue_after_commit("core.tasks.ping", token)
        assert cache.get(f"ping:{token}") is None  # not before the commit

    assert cache.get(f"ping:{token}") == "pong"  # eager in tests: it ran at commit


@pytest.mark.django_db(transaction=True)
def test_a_stopped_broker_is_one_warning_naming_the_task(broker_down, caplog):
    caplog.set_level(logging.WARNING)

    with transaction.atomic():
        enqueue_after_commit("core.tasks.ping", "lost")

    records = [r for r in caplog.records if r.levelno >= logging.WARNING]
    assert [(r.name, r.levelname) for r in records] == [("core.enqueue", "WARNING")]
    assert "core.tasks.ping" in records[0].getMessage()
