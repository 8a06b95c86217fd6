"""enqueue_now: what a sweep (or a caller that must undo its rows) uses to queue a task at once, and to
know whether the broker took it."""

from __future__ import annotations

import logging
import uuid

import pytest
from django.core.cache import cache
from django.db import transaction

from config.celery_app import app
from core.ops.enqueue import enqueue_after_commit, enqueue_now

pytestmark = pytest.mark.django_db


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


def test_it_queues_the_task_at_once_even_inside_a_transaction():
    token = uuid.uuid4().hex

    assert enqueue_now("core.tasks.ping", token) is True  # the test's transaction is still open

    assert cache.get(f"ping:{token}") == "pong"


def test_an_unreachable_broker_is_false_and_one_warning(broker_down, caplog):
    """With the configured publish retries (about a second), then given up."""
    caplog.set_level(logging.WARNING)

    assert enqueue_now("core.tasks.ping", "lost") is False

    records = [r for r in caplog.records if r.levelno >= logging.WARNING]
    assert [(r.name, r.levelname) for r in records] == [("core.ops.enqueue", "WARNING")]
    assert "core.tasks.ping" in records[0].getMessage()


def test_a_misspelt_task_name_fails_loudly():
    with pytest.raises(KeyError):
        enqueue_now("core.tasks.pingg", "x")


@pytest.mark.django_db(transaction=True)
def test_a_job_that_cannot_be_queued_after_commit_does_not_fail_the_committed_request():
    """Django's robust on_commit logs a failing callback by its __qualname__: a functools.partial has none,
    so the logging itself raised and a request whose transaction had committed answered 500."""
    with transaction.atomic():
        enqueue_after_commit("no_such_app.tasks.nothing", "x")  # NotRegistered, logged at ERROR by Django

    assert transaction.get_autocommit()  # the commit finished and nothing escaped it
