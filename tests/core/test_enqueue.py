"""enqueue_after_commit: a registered task, by name, queued only once the transaction commits."""

from __future__ import annotations

import logging
import uuid

import pytest
from django.core.cache import cache
from django.db import transaction

from config.celery_app import app
from core.ops.enqueue import enqueue_after_commit

pytestmark = pytest.mark.django_db


@pytest.fixture
def broker_down(settings):
    """Celery not eager and its broker unreachable, as when the broker is stopped."""
    keys = ("task_always_eager", "broker_url", "broker_connection_timeout", "broker_connection_max_retries")
    saved = {key: app.conf[key] for key in (*keys, "task_publish_retry")}
    settings.CELERY_TASK_ALWAYS_EAGER = False
    app.conf.update(
        task_always_eager=False,
        broker_url="redis://127.0.0.1:9/0",
        broker_connection_timeout=1,
        broker_connection_max_retries=1,
        task_publish_retry=False,
    )
    app._pool = None
    app.amqp._producer_pool = None
    yield
    app.conf.update(saved)
    app._pool = None
    app.amqp._producer_pool = None


def test_it_runs_the_task_once_the_transaction_commits(django_capture_on_commit_callbacks):
    token = uuid.uuid4().hex

    with django_capture_on_commit_callbacks(execute=True), transaction.atomic():
        enqueue_after_commit("core.tasks.ping", token)
        assert cache.get(f"ping:{token}") is None

    assert cache.get(f"ping:{token}") == "pong"


def test_nothing_is_queued_when_the_transaction_rolls_back(django_capture_on_commit_callbacks):
    token = uuid.uuid4().hex

    with (
        django_capture_on_commit_callbacks(execute=True) as callbacks,
        pytest.raises(RuntimeError),
        transaction.atomic(),
    ):
        enqueue_after_commit("core.tasks.ping", token)
        raise RuntimeError("rolled back")

    assert callbacks == []
    assert cache.get(f"ping:{token}") is None


def test_an_unreachable_broker_is_logged_once_at_warning_and_the_caller_goes_on(
    broker_down, django_capture_on_commit_callbacks, caplog
):
    token = uuid.uuid4().hex

    with (
        caplog.at_level(logging.WARNING, logger="core.ops.enqueue"),
        django_capture_on_commit_callbacks(execute=True),
        transaction.atomic(),
    ):
        enqueue_after_commit("core.tasks.ping", token)

    records = [r for r in caplog.records if r.name == "core.ops.enqueue"]
    assert [(r.levelno, "core.tasks.ping" in r.getMessage()) for r in records] == [(logging.WARNING, True)]
    assert cache.get(f"ping:{token}") is None
