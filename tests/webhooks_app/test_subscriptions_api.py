"""Outbound webhook subscriptions: create, list, read, delete, rotate the secret, deliveries."""

from __future__ import annotations

import uuid
from datetime import timedelta

import pytest
from django.db import connection
from django.test.utils import CaptureQueriesContext
from django.utils import timezone
from standardwebhooks import Webhook

from tests.webhooks_app.factories import WebhookSubscriptionFactory
from webhooks_app.models import WebhookAttempt, WebhookDelivery, WebhookEvent, WebhookSubscription
from webhooks_app.services import MAX_SUBSCRIPTIONS_PER_OWNER

pytestmark = pytest.mark.django_db

URL = "/api/v1/webhooks/subscriptions"


def _create(client, **overrides):
    body = {"url": "https://hooks.example.com/in", "events": ["task.created", "bid.selected"], **overrides}
    return client.post(URL, body, format="json")


def test_it_creates_a_subscription_and_shows_the_secret_once(alice_api, alice):
    response = _create(alice_api, description="CRM sync")

    assert response.status_code == 201, response.content
    body = response.json()
    assert body["secret"].startswith("whsec_")
    Webhook(body["secret"])  # a secret the standardwebhooks libraries accept
    assert body["url"] == "https://hooks.example.com/in"
    assert body["events"] == ["task.created", "bid.selected"]
    assert body["description"] == "CRM sync"
    assert body["is_active"] is True
    assert body["previous_secret_expires_at"] is None
    stored = WebhookSubscription.objects.get(id=body["id"])
    assert (stored.owner, stored.secret) == (alice, body["secret"])

    shown_again = alice_api.get(f"{URL}/{body['id']}").json()
    assert "secret" not in shown_again
    assert body["secret"] not in alice_api.get(URL).content.decode()


def test_an_api_key_may_manage_subscriptions(alice_key_api, alice):
    response = _create(alice_key_api)

    assert response.status_code == 201
    assert WebhookSubscription.objects.get().owner == alice
    assert alice_key_api.get(URL).json()["total"] == 1


def test_duplicate_events_are_stored_once(alice_api):
    response = _create(alice_api, events=["task.created", "task.created"])

    assert response.json()["events"] == ["task.created"]


@pytest.mark.parametrize(
    ("events", "error_type", "loc"),
    [
        ([], "too_short", ["body", "events"]),
        (["task.exploded"], "literal_error", ["body", "events", 0]),
        ("task.created", "list_type", ["body", "events"]),
    ],
)
def test_events_must_be_a_non_empty_list_of_known_types(alice_api, events, error_type, loc):
    response = _create(alice_api, events=events)

    assert response.status_code == 422
    [error] = response.json()["detail"]
    assert (error["type"], error["loc"]) == (error_type, loc)
    assert WebhookSubscription.objects.count() == 0


def test_url_and_events_are_required(alice_api):
    response = alice_api.post(URL, {}, format="json")

    assert response.status_code == 422
    assert sorted((e["type"], tuple(e["loc"])) for e in response.json()["detail"]) == [
        ("missing", ("body", "events")),
        ("missing", ("body", "url")),
    ]


@pytest.mark.parametrize(
    "url",
    [
        "https://127.0.0.1/hook",
        "https://10.0.0.1/hook",
        "https://169.254.169.254/latest/meta-data",
        "https://[::1]/hook",
        "http://93.184.215.14/hook",  # public, but not https
    ],
)
def test_private_addresses_and_plain_http_are_refused_unless_allowed(alice_api, settings, url):
    settings.OUTBOUND_ALLOW_PRIVATE_URLS = False

    response = _create(alice_api, url=url)

    assert response.status_code == 422, response.content
    [error] = response.json()["detail"]
    assert (error["type"], error["loc"]) == ("value_error", ["body", "url"])
    assert WebhookSubscription.objects.count() == 0


def test_a_public_https_address_is_accepted_when_private_ones_are_not(alice_api, settings):
    settings.OUTBOUND_ALLOW_PRIVATE_URLS = False

    assert _create(alice_api, url="https://93.184.215.14/hook").status_code == 201


def test_private_urls_and_http_are_accepted_when_allowed(alice_api, settings):
    settings.OUTBOUND_ALLOW_PRIVATE_URLS = True

    assert _create(alice_api, url="http://127.0.0.1:9000/hook").status_code == 201
    assert _create(alice_api, url="https://10.0.0.1/hook").status_code == 201


def test_the_list_holds_only_your_subscriptions_newest_first(alice_api, alice, bob):
    older = WebhookSubscriptionFactory(owner=alice)
    newer = WebhookSubscriptionFactory(owner=alice)
    WebhookSubscriptionFactory(owner=bob)

    body = alice_api.get(URL).json()

    assert body["total"] == 2
    assert body["has_more"] is False
    assert [item["id"] for item in body["items"]] == [str(newer.id), str(older.id)]


def test_the_list_pages(alice_api, alice):
    WebhookSubscriptionFactory.create_batch(3, owner=alice)

    body = alice_api.get(URL, {"limit": 2, "offset": 0}).json()

    assert (len(body["items"]), body["total"], body["has_more"]) == (2, 3, True)


def _queries(call) -> int:
    call()  # warm per-process caches (rate-limit overrides) so only the view's own queries differ
    with CaptureQueriesContext(connection) as captured:
        call()
    return len(captured.captured_queries)


def test_the_list_costs_the_same_queries_for_1_or_25(alice_api, alice):
    WebhookSubscriptionFactory(owner=alice)
    one = _queries(lambda: alice_api.get(URL))
    WebhookSubscriptionFactory.create_batch(24, owner=alice)

    many = _queries(lambda: alice_api.get(URL, {"limit": 100}))

    assert many == one
    assert alice_api.get(URL, {"limit": 100}).json()["total"] == 25


# --- Owner / other user / anonymous --------------------------------------------------------------------


@pytest.mark.parametrize(
    ("method", "suffix"),
    [("get", ""), ("delete", ""), ("post", "/rotate-secret"), ("get", "/deliveries")],
)
def test_someone_elses_subscription_is_404_and_untouched(bob_api, alice, method, suffix):
    subscription = WebhookSubscriptionFactory(owner=alice)

    response = getattr(bob_api, method)(f"{URL}/{subscription.id}{suffix}")

    assert response.status_code == 404
    assert response.json()["code"] == "not_found"
    subscription.refresh_from_db()  # still there, secret unchanged
    assert WebhookSubscription.objects.get(id=subscription.id).secret == subscription.secret


@pytest.mark.parametrize(
    ("method", "suffix"),
    [("get", ""), ("delete", ""), ("post", "/rotate-secret"), ("get", "/deliveries")],
)
def test_anonymous_is_401(api, alice, method, suffix):
    subscription = WebhookSubscriptionFactory(owner=alice)

    response = getattr(api, method)(f"{URL}/{subscription.id}{suffix}")

    assert response.status_code == 401
    assert WebhookSubscription.objects.filter(id=subscription.id).exists()


def test_a_missing_subscription_is_404_and_a_malformed_id_422(alice_api):
    assert alice_api.get(f"{URL}/{uuid.uuid4()}").status_code == 404
    response = alice_api.get(f"{URL}/not-a-uuid")
    assert response.status_code == 422
    assert response.json()["detail"][0]["loc"] == ["path", "subscription_id"]


def test_the_owner_reads_it(alice_api, alice):
    subscription = WebhookSubscriptionFactory(owner=alice, description="ops")

    body = alice_api.get(f"{URL}/{subscription.id}").json()

    assert body["id"] == str(subscription.id)
    assert body["description"] == "ops"


def test_the_owner_deletes_it_with_its_history(alice_api, alice):
    subscription = WebhookSubscriptionFactory(owner=alice)
    event = WebhookEvent.objects.create(owner=alice, type="task.created", body="{}")
    WebhookDelivery.objects.create(event=event, subscription=subscription, message_id="msg_x")

    response = alice_api.delete(f"{URL}/{subscription.id}")

    assert response.status_code == 204
    assert not WebhookSubscription.objects.filter(id=subscription.id).exists()
    assert not WebhookDelivery.objects.exists()
    assert alice_api.get(f"{URL}/{subscription.id}").status_code == 404


def test_rotation_returns_a_new_secret_and_keeps_the_old_one_for_24_hours(alice_api, alice):
    subscription = WebhookSubscriptionFactory(owner=alice)
    old = subscription.secret

    response = alice_api.post(f"{URL}/{subscription.id}/rotate-secret")

    assert response.status_code == 200
    body = response.json()
    assert body["secret"].startswith("whsec_") and body["secret"] != old
    subscription.refresh_from_db()
    assert (subscription.secret, subscription.previous_secret) == (body["secret"], old)
    grace = subscription.previous_secret_expires_at - timezone.now()
    assert timedelta(hours=23, minutes=59) < grace <= timedelta(hours=24)
    assert body["previous_secret_expires_at"] is not None


def test_deliveries_are_listed_with_their_attempts(alice_api, alice, bob):
    subscription = WebhookSubscriptionFactory(owner=alice)
    event = WebhookEvent.objects.create(owner=alice, type="task.created", body='{"type":"task.created","data":{}}')
    delivery = WebhookDelivery.objects.create(
        event=event, subscription=subscription, message_id="msg_1", status="failed", attempt_count=1
    )
    WebhookAttempt.objects.create(delivery=delivery, number=1, url=subscription.url, status="failed", status_code=500)
    other = WebhookSubscriptionFactory(owner=alice)
    WebhookDelivery.objects.create(event=event, subscription=other, message_id="msg_2")

    body = alice_api.get(f"{URL}/{subscription.id}/deliveries").json()

    assert body["total"] == 1
    [item] = body["items"]
    assert item["message_id"] == "msg_1"
    assert item["event_type"] == "task.created"
    assert item["payload"] == {"type": "task.created", "data": {}}
    assert [(a["number"], a["status"], a["status_code"]) for a in item["attempts"]] == [(1, "failed", 500)]
    assert alice_api.get(f"{URL}/{subscription.id}/deliveries", {"status": "succeeded"}).json()["total"] == 0
    assert alice_api.get(f"{URL}/{subscription.id}/deliveries", {"status": "nope"}).status_code == 422


def test_deliveries_cost_the_same_queries_for_1_or_25(alice_api, alice):
    subscription = WebhookSubscriptionFactory(owner=alice)

    def add(n):
        for _ in range(n):
            event = WebhookEvent.objects.create(owner=alice, type="task.created", body="{}")
            delivery = WebhookDelivery.objects.create(
                event=event, subscription=subscription, message_id=f"msg_{uuid.uuid4().hex}"
            )
            WebhookAttempt.objects.create(delivery=delivery, number=1, url=subscription.url)

    add(1)
    one = _queries(lambda: alice_api.get(f"{URL}/{subscription.id}/deliveries"))
    add(24)

    many = _queries(lambda: alice_api.get(f"{URL}/{subscription.id}/deliveries", {"limit": 100}))

    assert many == one
    response = alice_api.get(f"{URL}/{subscription.id}/deliveries", {"limit": 100})
    assert len(response.json()["items"]) == 25
    assert all(len(item["attempts"]) == 1 for item in response.json()["items"])


def test_too_many_subscriptions_is_409(alice_api, alice):
    WebhookSubscription.objects.bulk_create(
        WebhookSubscription(owner=alice, url=f"https://hooks.example.com/{n}", events=["task.created"], secret="x")
        for n in range(MAX_SUBSCRIPTIONS_PER_OWNER)
    )

    response = _create(alice_api)

    assert response.status_code == 409
    assert response.json()["code"] == "subscription_limit"
    assert WebhookSubscription.objects.count() == MAX_SUBSCRIPTIONS_PER_OWNER
