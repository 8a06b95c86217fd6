"""Unsigned inbound webhook bodies are not stored, and old log rows are pruned."""

from __future__ import annotations

from datetime import timedelta

import pytest
from django.db.models import Sum
from django.db.models.functions import Length
from django.utils import timezone

from core.tasks import prune_logs
from payments.provider_events import build_event
from tasks_market.models import DeliveryAttempt
from tests.tasks_market.factories import delivering_task
from tests.webhooks_app.conftest import WEBHOOK_URL, post_event
from tests.webhooks_app.factories import WebhookSubscriptionFactory
from webhooks_app.models import InboundDelivery, WebhookAttempt, WebhookDelivery, WebhookEvent

pytestmark = pytest.mark.django_db

BIG = 256 * 1024


@pytest.fixture(autouse=True)
def _secrets(settings):
    settings.PAYMENTS_WEBHOOK_SECRET = ["whsec_current"]


def stored_bytes() -> int:
    return InboundDelivery.objects.aggregate(n=Sum(Length("body")))["n"] or 0


def test_unsigned_and_badly_signed_bodies_are_not_stored(api):
    body = b'{"padding": "' + b"x" * (BIG - 20) + b'"}'
    unsigned = api.post(WEBHOOK_URL, data=body, content_type="application/json", REMOTE_ADDR="203.0.113.9")
    wrong = api.post(
        WEBHOOK_URL, data=body, content_type="application/json", HTTP_PAYMENTS_SIGNATURE="t=1,v1=" + "0" * 64
    )
    forged = post_event(api, build_event("payment_intent.succeeded", {"id": "pi_x"}, secret="whsec_attacker"))

    assert [r.status_code for r in (unsigned, wrong, forged)] == [400, 400, 400]
    assert stored_bytes() == 0
    rows = InboundDelivery.objects.order_by("received_at")
    assert [(r.outcome, r.body, r.headers, r.signature_valid) for r in rows] == [
        ("invalid_signature", "", {}, False)
    ] * 3
    assert (rows[0].remote_ip, rows[0].body_size, rows[0].error) == ("203.0.113.9", len(body), "Missing signature.")


def test_a_correctly_signed_delivery_is_still_stored_whole(api):
    signed = build_event("test.unhandled", {"id": "pi_kept"}, secret="whsec_current")

    response = post_event(api, signed)

    assert response.status_code == 200
    delivery = InboundDelivery.objects.get()
    assert (delivery.body, delivery.signature_valid) == (signed.body.decode(), True)


def _age(queryset, field: str, days: int) -> None:
    queryset.update(**{field: timezone.now() - timedelta(days=days)})


def test_the_retention_job_prunes_old_logs_and_keeps_recent_ones(api, settings):
    settings.INBOUND_REFUSED_RETENTION_DAYS = 7
    settings.INBOUND_DELIVERY_RETENTION_DAYS = 30
    settings.WEBHOOK_ATTEMPT_RETENTION_DAYS = 30
    settings.DISPATCH_ATTEMPT_RETENTION_DAYS = 30
    for _ in range(3):
        api.post(WEBHOOK_URL, data=b"{}", content_type="application/json")  # refused
    signed = [build_event("test.unhandled", {"id": f"pi_{n}"}, secret="whsec_current") for n in range(3)]
    for event in signed:
        post_event(api, event)
    refused = list(InboundDelivery.objects.filter(signature_valid=False).values_list("pk", flat=True))
    valid = list(InboundDelivery.objects.filter(signature_valid=True).values_list("pk", flat=True))
    _age(InboundDelivery.objects.filter(pk=refused[0]), "received_at", 8)  # past 7 days: pruned
    _age(InboundDelivery.objects.filter(pk=valid[0]), "received_at", 8)  # signed, under 30 days: kept
    _age(InboundDelivery.objects.filter(pk=valid[1]), "received_at", 31)  # pruned

    subscription = WebhookSubscriptionFactory()
    event = WebhookEvent.objects.create(owner=subscription.owner, type="task.created", body="{}")
    outbound = WebhookDelivery.objects.create(event=event, subscription=subscription, message_id="msg_1")
    old_attempt = WebhookAttempt.objects.create(delivery=outbound, number=1, url=subscription.url)
    WebhookAttempt.objects.create(delivery=outbound, number=2, url=subscription.url)
    _age(WebhookAttempt.objects.filter(pk=old_attempt.pk), "started_at", 31)

    _, dispatch = delivering_task()
    old_dispatch = DeliveryAttempt.objects.create(delivery=dispatch, number=1, round=1, url="https://a.example.com")
    DeliveryAttempt.objects.create(delivery=dispatch, number=2, round=1, url="https://a.example.com")
    _age(DeliveryAttempt.objects.filter(pk=old_dispatch.pk), "started_at", 31)

    counts = prune_logs.delay().get()

    assert counts == {"inbound_refused": 1, "inbound_deliveries": 1, "webhook_attempts": 1, "dispatch_attempts": 1}
    assert set(InboundDelivery.objects.values_list("pk", flat=True)) == {*refused[1:], valid[0], valid[2]}
    assert WebhookAttempt.objects.filter(delivery=outbound).count() == 1
    assert DeliveryAttempt.objects.filter(delivery=dispatch).count() == 1
    assert prune_logs.delay().get() == dict.fromkeys(counts, 0)  # idempotent


def test_the_retention_job_is_on_the_beat_schedule(settings):
    assert settings.CELERY_BEAT_SCHEDULE["core.prune_logs"]["task"] == "core.tasks.prune_logs"
