"""Dispatching a paid task to the agent: signed, attempts recorded, retried on a schedule, then failed."""

from __future__ import annotations

from datetime import timedelta

import pytest
from django.db import connection
from django.utils import timezone
from standardwebhooks import Webhook

from tasks_market.models import Delivery, DeliveryAttempt
from tasks_market.services.agents import agent_rotate_secret
from tasks_market.services.dispatch import MAX_ROUND_ATTEMPTS, RETRY_DELAYS, delivery_dispatch_attempt
from tests.tasks_market.factories import AgentFactory, delivering_task
from webhooks_app.models import WebhookEvent
from webhooks_app.services import webhook_subscription_create

pytestmark = pytest.mark.django_db


def pending_delivery(agent_server, **agent_fields):
    agent = AgentFactory(endpoint_url=agent_server.url, **agent_fields)
    _, delivery = delivering_task(agent=agent, delivery_status="pending")
    return delivery


def test_a_dispatch_is_signed_and_recorded(agent_server, django_capture_on_commit_callbacks):
    delivery = pending_delivery(agent_server)
    agent_server.secret = delivery.agent.signing_secret
    webhook_subscription_create(
        owner=delivery.task.poster, url="https://hooks.example.com/x", events=["delivery.dispatched"]
    )

    with django_capture_on_commit_callbacks(execute=True):
        assert delivery_dispatch_attempt(delivery_id=delivery.id) is None

    delivery.refresh_from_db()
    assert delivery.status == "dispatched"
    assert delivery.dispatched_at is not None
    request = agent_server.requests[0]
    assert request["verified"] is True
    assert request["headers"]["webhook-id"] == delivery.message_id
    assert request["json"]["type"] == "task.dispatched"
    attempt = DeliveryAttempt.objects.get(delivery=delivery)
    assert (attempt.number, attempt.round, attempt.status, attempt.status_code) == (1, 1, "succeeded", 200)
    assert attempt.finished_at is not None
    assert WebhookEvent.objects.filter(owner=delivery.task.poster, type="delivery.dispatched").count() == 1


def test_a_second_run_sends_nothing(agent_server):
    delivery = pending_delivery(agent_server)

    delivery_dispatch_attempt(delivery_id=delivery.id)
    delivery_dispatch_attempt(delivery_id=delivery.id)

    assert len(agent_server.requests) == 1
    assert DeliveryAttempt.objects.filter(delivery=delivery).count() == 1


def test_failures_back_off_then_fail_the_delivery(agent_server, django_capture_on_commit_callbacks):
    delivery = pending_delivery(agent_server)
    agent_server.status = 503
    webhook_subscription_create(
        owner=delivery.agent.owner, url="https://hooks.example.com/x", events=["delivery.failed"]
    )
    now = timezone.now()
    delays = []

    with django_capture_on_commit_callbacks(execute=True):
        for _ in range(MAX_ROUND_ATTEMPTS):
            delivery.refresh_from_db()
            assert delivery_dispatch_attempt(delivery_id=delivery.id, now=now - timedelta(seconds=1)) is None
            delay = delivery_dispatch_attempt(delivery_id=delivery.id, now=delivery.next_attempt_at)
            delays.append(delay)
            if delay is not None:
                now = delivery.next_attempt_at + timedelta(seconds=delay)

    assert len(delays) == len(RETRY_DELAYS) + 1
    assert all(0.9 * base <= delay <= 1.1 * base for delay, base in zip(delays, RETRY_DELAYS, strict=False))
    assert delays[-1] is None
    delivery.refresh_from_db()
    assert delivery.status == "failed"
    assert delivery.last_error == "The endpoint answered 503."
    attempts = list(DeliveryAttempt.objects.filter(delivery=delivery).values_list("number", "status", "status_code"))
    assert attempts == [(n, "failed", 503) for n in range(1, MAX_ROUND_ATTEMPTS + 1)]
    assert WebhookEvent.objects.filter(owner=delivery.agent.owner, type="delivery.failed").count() == 1


def test_a_gone_endpoint_fails_at_once(agent_server):
    delivery = pending_delivery(agent_server)
    agent_server.status = 410

    assert delivery_dispatch_attempt(delivery_id=delivery.id) is None

    delivery.refresh_from_db()
    assert delivery.status == "failed"
    assert DeliveryAttempt.objects.filter(delivery=delivery).count() == 1


def test_a_private_endpoint_is_refused_when_not_allowed(agent_server, settings):
    delivery = pending_delivery(agent_server)
    settings.OUTBOUND_ALLOW_PRIVATE_URLS = False

    delivery_dispatch_attempt(delivery_id=delivery.id)

    delivery.refresh_from_db()
    assert delivery.status == "failed"
    assert agent_server.requests == []
    assert DeliveryAttempt.objects.get(delivery=delivery).error.startswith("The URL was refused")


def test_after_a_rotation_both_secrets_verify(agent_server):
    delivery = pending_delivery(agent_server)
    old = delivery.agent.signing_secret
    new = agent_rotate_secret(owner=delivery.agent.owner, agent_id=delivery.agent_id).signing_secret

    delivery_dispatch_attempt(delivery_id=delivery.id)

    request = agent_server.requests[0]
    assert len(request["headers"]["webhook-signature"].split(" ")) == 2
    for secret in (old, new):
        Webhook(secret).verify(request["body"], request["headers"])


@pytest.mark.django_db(transaction=True)
def test_a_submission_during_the_attempt_is_not_overwritten(agent_server):
    delivery = pending_delivery(agent_server)

    def agent_submits_before_answering(body):
        try:
            Delivery.objects.filter(pk=delivery.pk).update(status="submitted")
        finally:
            connection.close()

    agent_server.on_request = agent_submits_before_answering
    delivery_dispatch_attempt(delivery_id=delivery.id)

    delivery.refresh_from_db()
    assert (delivery.status, delivery.claimed_at) == ("submitted", None)
