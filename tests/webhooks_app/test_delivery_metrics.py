"""Outbound webhook attempts are counted by outcome (core/ops/metrics.py, docs/operations.md#metrics-and-traces)."""

from __future__ import annotations

import pytest
from django.db import transaction

from core.ops import metrics
from webhooks_app.delivery import webhook_delivery_attempt
from webhooks_app.models import WebhookDelivery
from webhooks_app.services import event_publish

pytestmark = pytest.mark.django_db


def outcomes() -> dict[str, float]:
    return {
        sample.labels["outcome"]: sample.value
        for family in metrics.WEBHOOK_DELIVERIES.collect()
        for sample in family.samples
        if sample.name.endswith("_total")
    }


def test_a_retried_then_delivered_webhook_counts_one_retrying_and_one_succeeded(
    monkeypatch, alice, alice_api, receiver, django_capture_on_commit_callbacks
):
    monkeypatch.setattr(metrics, "ENABLED", True)  # off in the test settings (no PROMETHEUS_MULTIPROC_DIR)
    subscribed = alice_api.post(
        "/api/v1/webhooks/subscriptions", {"url": receiver.url, "events": ["task.created"]}, format="json"
    )
    assert subscribed.status_code == 201, subscribed.content
    receiver.responses = [500, 200]
    before = outcomes()

    with django_capture_on_commit_callbacks(execute=True), transaction.atomic():
        event_publish(owner=alice, event_type="task.created", data={"task_id": "t-1"})
    delivery = WebhookDelivery.objects.get()
    with django_capture_on_commit_callbacks(execute=True):
        webhook_delivery_attempt(delivery_id=delivery.id, now=delivery.next_attempt_at)

    after = outcomes()
    assert after.get("retrying", 0) - before.get("retrying", 0) == 1
    assert after.get("succeeded", 0) - before.get("succeeded", 0) == 1
    assert after.get("failed", 0) == before.get("failed", 0)
