"""Outbound delivery to a real HTTP receiver on 127.0.0.1 (docs/decisions.md#outbound-webhooks-and-agent-dispatch).

Celery runs eagerly here. A failed attempt schedules the next one as a separate message that only
acts once the delivery is due, so the tests drive retries by running the attempt at the due time.
"""

from __future__ import annotations

import json
import threading
from datetime import timedelta

import pytest
from django.db import connection, transaction
from django.utils import timezone
from standardwebhooks import Webhook
from standardwebhooks.webhooks import WebhookVerificationError

from signed_delivery.signing import new_secret, sign_headers
from tests.webhooks_app.factories import WebhookSubscriptionFactory
from webhooks_app.delivery import MAX_ATTEMPTS, RETRY_DELAYS, webhook_deliveries_sweep, webhook_delivery_attempt
from webhooks_app.models import WebhookAttempt, WebhookDelivery, WebhookEvent, WebhookSubscription
from webhooks_app.services import event_publish, webhook_subscription_rotate_secret
from webhooks_app.tasks import deliver_webhook

pytestmark = pytest.mark.django_db


@pytest.fixture
def publish(alice, django_capture_on_commit_callbacks):
    """Publish as domain code does: inside a transaction, delivered after it commits."""

    def publish(event_type="task.created", data=None, owner=alice):
        with django_capture_on_commit_callbacks(execute=True), transaction.atomic():
            event_publish(owner=owner, event_type=event_type, data=data or {"task_id": "t-1"})

    return publish


def _subscribe(alice_api, receiver, events=("task.created",)) -> tuple[WebhookSubscription, str]:
    response = alice_api.post(
        "/api/v1/webhooks/subscriptions", {"url": receiver.url, "events": list(events)}, format="json"
    )
    assert response.status_code == 201, response.content
    return WebhookSubscription.objects.get(id=response.json()["id"]), response.json()["secret"]


def test_a_delivery_is_signed_per_standard_webhooks(alice_api, receiver, publish):
    _, secret = _subscribe(alice_api, receiver)

    publish(data={"task_id": "t-1", "amount": "49.00"})

    [request] = receiver.requests
    payload = Webhook(secret).verify(request.body, request.headers)
    assert payload["type"] == "task.created"
    assert payload["data"] == {"task_id": "t-1", "amount": "49.00"}
    assert payload["timestamp"]
    delivery = WebhookDelivery.objects.get()
    assert request.headers["webhook-id"] == delivery.message_id
    assert request.headers["content-type"] == "application/json"
    assert delivery.status == "succeeded"
    [attempt] = delivery.attempts.all()
    assert (attempt.number, attempt.status, attempt.status_code) == (1, "succeeded", 200)
    assert attempt.duration_ms is not None
    assert attempt.response_excerpt == '{"ok": true}'
    with pytest.raises(WebhookVerificationError):
        Webhook(new_secret()).verify(request.body, request.headers)


def test_only_matching_active_subscriptions_of_the_owner_receive_it(alice_api, bob_api, receiver, publish, alice):
    _subscribe(alice_api, receiver, events=("bid.selected",))
    _subscribe(bob_api, receiver, events=("task.created",))
    WebhookSubscriptionFactory(owner=alice, url=receiver.url, events=["task.created"], is_active=False)

    publish("task.created")

    assert receiver.requests == []
    assert WebhookEvent.objects.count() == 0


def test_nothing_is_sent_when_the_transaction_rolls_back(
    alice_api, receiver, alice, django_capture_on_commit_callbacks
):
    _subscribe(alice_api, receiver)

    with django_capture_on_commit_callbacks(execute=True), pytest.raises(RuntimeError), transaction.atomic():
        event_publish(owner=alice, event_type="task.created", data={})
        raise RuntimeError("the domain change failed")

    assert receiver.requests == []
    assert WebhookDelivery.objects.count() == 0


def test_an_unknown_event_type_is_a_programming_error(alice):
    with pytest.raises(ValueError, match="not an outbound event type"):
        event_publish(owner=alice, event_type="task.exploded", data={})


def test_a_500_is_retried_with_the_same_webhook_id_and_then_succeeds(alice_api, receiver, publish):
    subscription, secret = _subscribe(alice_api, receiver)
    receiver.responses = [500, 200]

    publish()

    delivery = WebhookDelivery.objects.get()
    assert len(receiver.requests) == 1  # the retry message ran at once (eager) but was not due yet
    assert (delivery.status, delivery.attempt_count, delivery.last_status_code) == ("pending", 1, 500)
    wait = (delivery.next_attempt_at - delivery.attempts.get().started_at).total_seconds()
    assert 5 * 0.9 - 1 <= wait <= 5 * 1.1 + 1

    webhook_delivery_attempt(delivery_id=delivery.id, now=delivery.next_attempt_at)

    first, second = receiver.requests
    assert first.headers["webhook-id"] == second.headers["webhook-id"] == delivery.message_id
    assert first.body == second.body
    for request in (first, second):
        Webhook(secret).verify(request.body, request.headers)
    delivery.refresh_from_db()
    assert (delivery.status, delivery.attempt_count, delivery.last_status_code) == ("succeeded", 2, 200)
    assert list(delivery.attempts.values_list("number", "status", "status_code")) == [
        (1, "failed", 500),
        (2, "succeeded", 200),
    ]
    listed = alice_api.get(f"/api/v1/webhooks/subscriptions/{subscription.id}/deliveries").json()["items"]
    assert [a["status_code"] for a in listed[0]["attempts"]] == [500, 200]


def test_running_the_task_again_after_success_sends_nothing(alice_api, receiver, publish):
    _subscribe(alice_api, receiver)
    publish()
    delivery = WebhookDelivery.objects.get()

    deliver_webhook(str(delivery.id))
    webhook_delivery_attempt(delivery_id=delivery.id, now=timezone.now() + timedelta(days=1))

    assert len(receiver.requests) == 1


def test_attempts_follow_the_schedule_then_the_delivery_fails(alice_api, receiver, publish):
    _subscribe(alice_api, receiver)
    receiver.responses = [503] * MAX_ATTEMPTS

    publish()
    delivery = WebhookDelivery.objects.get()
    clock = delivery.attempts.get().started_at  # the first attempt ran about then
    for expected in RETRY_DELAYS:
        delivery.refresh_from_db()
        assert delivery.status == "pending"
        wait = (delivery.next_attempt_at - clock).total_seconds()
        assert expected * 0.9 - 1 <= wait <= expected * 1.1 + 1
        clock = delivery.next_attempt_at
        webhook_delivery_attempt(delivery_id=delivery.id, now=clock)

    delivery.refresh_from_db()
    assert (delivery.status, delivery.attempt_count) == ("failed", MAX_ATTEMPTS)
    assert delivery.completed_at is not None
    assert len(receiver.requests) == MAX_ATTEMPTS == 8
    assert len({r.headers["webhook-id"] for r in receiver.requests}) == 1
    assert webhook_delivery_attempt(delivery_id=delivery.id, now=timezone.now() + timedelta(days=9)) is None
    assert len(receiver.requests) == MAX_ATTEMPTS


def test_a_410_disables_the_subscription_and_nothing_more_is_sent(alice_api, receiver, publish):
    subscription, _ = _subscribe(alice_api, receiver)
    receiver.responses = [500, 410]
    publish(data={"n": 1})  # answered 500: waits for its retry
    publish(data={"n": 2})  # answered 410
    waiting, gone = WebhookDelivery.objects.order_by("created_at")

    subscription.refresh_from_db()
    assert subscription.is_active is False
    assert "410" in subscription.disabled_reason
    gone.refresh_from_db()
    assert (gone.status, gone.last_status_code) == ("failed", 410)

    publish(data={"n": 3})
    waiting.refresh_from_db()
    webhook_delivery_attempt(delivery_id=waiting.id, now=waiting.next_attempt_at)

    assert len(receiver.requests) == 2
    assert WebhookDelivery.objects.count() == 2
    waiting.refresh_from_db()
    assert (waiting.status, waiting.last_error) == ("failed", "The subscription is disabled.")
    assert alice_api.get(f"/api/v1/webhooks/subscriptions/{subscription.id}").json()["is_active"] is False


def test_after_a_rotation_both_secrets_verify_for_the_grace_period_then_only_the_new(
    alice_api, alice, receiver, publish
):
    subscription, old_secret = _subscribe(alice_api, receiver)
    rotated = alice_api.post(f"/api/v1/webhooks/subscriptions/{subscription.id}/rotate-secret")
    new_secret_ = rotated.json()["secret"]
    receiver.responses = [200, 500, 200]

    publish(data={"n": 1})
    during = receiver.requests[0]
    assert len(during.headers["webhook-signature"].split(" ")) == 2
    Webhook(old_secret).verify(during.body, during.headers)
    Webhook(new_secret_).verify(during.body, during.headers)

    publish(data={"n": 2})  # answered 500; its retry runs after the grace period
    delivery = WebhookDelivery.objects.filter(status="pending").get()
    webhook_delivery_attempt(delivery_id=delivery.id, now=timezone.now() + timedelta(hours=24, minutes=1))

    after = receiver.requests[2]
    assert len(after.headers["webhook-signature"].split(" ")) == 1
    Webhook(new_secret_).verify(after.body, after.headers)
    with pytest.raises(WebhookVerificationError):
        Webhook(old_secret).verify(after.body, after.headers)


def test_rotating_twice_keeps_only_the_last_two_secrets(alice):
    subscription = WebhookSubscriptionFactory(owner=alice)
    first = subscription.secret

    webhook_subscription_rotate_secret(owner=alice, subscription_id=subscription.id)
    second = WebhookSubscription.objects.get(pk=subscription.pk).secret
    webhook_subscription_rotate_secret(owner=alice, subscription_id=subscription.id)
    subscription.refresh_from_db()

    assert subscription.previous_secret == second
    assert first not in (subscription.secret, subscription.previous_secret)


def test_the_url_is_checked_again_at_delivery_time(alice_api, receiver, publish, settings):
    _subscribe(alice_api, receiver)  # accepted while private addresses were allowed
    settings.OUTBOUND_ALLOW_PRIVATE_URLS = False

    publish()

    assert receiver.requests == []
    delivery = WebhookDelivery.objects.get()
    assert delivery.status == "pending"
    attempt = delivery.attempts.get()
    assert attempt.status == "failed"
    assert attempt.status_code is None
    assert attempt.error.startswith("The URL was refused")


def test_a_network_failure_is_recorded_and_retried(alice, publish):
    WebhookSubscriptionFactory(owner=alice, url="http://127.0.0.1:9/closed", events=["task.created"])

    publish()

    delivery = WebhookDelivery.objects.get()
    assert (delivery.status, delivery.attempt_count) == ("pending", 1)
    attempt = delivery.attempts.get()
    assert attempt.status == "failed"
    assert attempt.error == "The call failed: connection refused."
    assert delivery.last_error == attempt.error


def test_a_deleted_subscription_stops_its_retries(alice_api, receiver, publish, alice):
    subscription, _ = _subscribe(alice_api, receiver)
    receiver.responses = [500]
    publish()
    delivery_id = WebhookDelivery.objects.get().id

    alice_api.delete(f"/api/v1/webhooks/subscriptions/{subscription.id}")

    assert webhook_delivery_attempt(delivery_id=delivery_id, now=timezone.now() + timedelta(days=1)) is None
    assert len(receiver.requests) == 1


def test_the_sweep_sends_overdue_deliveries_and_recovers_stuck_ones(alice_api, receiver, alice):
    subscription, secret = _subscribe(alice_api, receiver)
    event = WebhookEvent.objects.create(owner=alice, type="task.created", body='{"type":"task.created"}')
    long_ago = timezone.now() - timedelta(minutes=10)
    lost = WebhookDelivery.objects.create(
        event=event, subscription=subscription, message_id="msg_lost", next_attempt_at=long_ago
    )
    stuck = WebhookDelivery.objects.create(
        event=event,
        subscription=subscription,
        message_id="msg_stuck",
        status="sending",
        claimed_at=long_ago,
        attempt_count=1,
        next_attempt_at=long_ago,
    )
    WebhookAttempt.objects.create(delivery=stuck, number=1, url=subscription.url)
    not_due = WebhookDelivery.objects.create(
        event=event,
        subscription=subscription,
        message_id="msg_later",
        next_attempt_at=timezone.now() + timedelta(hours=1),
    )

    queued = webhook_deliveries_sweep()

    assert queued == 2
    assert sorted(r.headers["webhook-id"] for r in receiver.requests) == ["msg_lost", "msg_stuck"]
    for request in receiver.requests:
        Webhook(secret).verify(request.body, request.headers)
    for delivery in (lost, stuck, not_due):
        delivery.refresh_from_db()
    assert (lost.status, stuck.status, not_due.status) == ("succeeded", "succeeded", "pending")
    assert list(stuck.attempts.values_list("number", "status")) == [(1, "failed"), (2, "succeeded")]
    assert stuck.attempts.get(number=1).error.startswith("Interrupted")


@pytest.mark.django_db(transaction=True)
def test_two_workers_running_the_same_delivery_send_it_once(receiver):
    from tests.support.factories import UserFactory

    owner = UserFactory()
    subscription = WebhookSubscriptionFactory(owner=owner, url=receiver.url, events=["task.created"])
    event = WebhookEvent.objects.create(owner=owner, type="task.created", body="{}")
    delivery = WebhookDelivery.objects.create(
        event=event, subscription=subscription, message_id="msg_race", next_attempt_at=timezone.now()
    )
    barrier = threading.Barrier(2)

    def work():
        try:
            barrier.wait(timeout=30)
            deliver_webhook(str(delivery.id))
        finally:
            connection.close()

    threads = [threading.Thread(target=work) for _ in range(2)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(timeout=60)

    assert len(receiver.requests) == 1
    assert WebhookAttempt.objects.count() == 1


def test_sign_headers_is_reusable_and_verifies_with_the_library():
    secret_a, secret_b = new_secret(), new_secret()
    body = json.dumps({"type": "delivery.dispatched"}).encode()

    headers = sign_headers([secret_a, secret_b], "msg_abc", int(timezone.now().timestamp()), body)

    assert headers["webhook-id"] == "msg_abc"
    assert headers["webhook-signature"].count("v1,") == 2
    assert Webhook(secret_a).verify(body, headers) == {"type": "delivery.dispatched"}
    assert Webhook(secret_b).verify(body, headers) == {"type": "delivery.dispatched"}
