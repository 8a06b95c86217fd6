"""Outbound events are written in the transaction of the change they announce, so nothing that happens
after the commit (a busy database, a broker that is down, a process that dies) can lose one: a delivery
whose message was never queued is sent by the sweep."""

from __future__ import annotations

import json
from datetime import timedelta
from decimal import Decimal

import pytest
from django.db import transaction
from django.utils import timezone

from tasks_market.services.posting import task_create
from webhooks_app.delivery import webhook_deliveries_sweep
from webhooks_app.models import WebhookDelivery, WebhookEvent
from webhooks_app.services import event_publish

pytestmark = pytest.mark.django_db


def _subscribe(client, receiver, events=("task.created",)) -> None:
    body = {"url": receiver.url, "events": list(events)}
    assert client.post("/api/v1/webhooks/subscriptions", body, format="json").status_code == 201


def _create_task(poster):
    return task_create(
        poster=poster,
        title="Launch copy",
        description="Announce the dashboard.",
        budget_amount=Decimal("100.00"),
        budget_currency="usd",
        deadline=timezone.now() + timedelta(days=3),
        category="content",
        requirements=[],
    )


def test_the_event_row_is_written_before_the_commit_not_after_it(alice_api, alice, receiver):
    _subscribe(alice_api, receiver)

    with transaction.atomic():
        task = _create_task(alice)
        # Still inside the change's transaction: the event and its delivery are already there.
        event = WebhookEvent.objects.get(type="task.created")
        delivery = WebhookDelivery.objects.get(event=event)

    assert str(task.id) in event.body
    assert delivery.status == "pending"


def test_an_event_rolls_back_with_its_change(alice_api, alice, receiver):
    _subscribe(alice_api, receiver)

    with pytest.raises(RuntimeError), transaction.atomic():
        _create_task(alice)
        raise RuntimeError("the change failed after publishing")

    assert WebhookEvent.objects.count() == 0


def test_a_delivery_whose_message_was_never_queued_is_sent_by_the_sweep(
    alice_api, alice, receiver, django_capture_on_commit_callbacks
):
    _subscribe(alice_api, receiver)
    # The process died right at the commit: the queueing due after it never runs.
    with django_capture_on_commit_callbacks(execute=False) as after_commit, transaction.atomic():
        event_publish(owner=alice, event_type="task.created", data={"task_id": "t-1"})
    assert after_commit
    assert receiver.requests == []

    queued = webhook_deliveries_sweep(now=timezone.now() + timedelta(minutes=2))

    assert queued == 1
    [request] = receiver.requests
    assert json.loads(request.body)["data"] == {"task_id": "t-1"}
    assert WebhookDelivery.objects.get().status == "succeeded"
