from __future__ import annotations

import pytest

from payments.provider_events import build_event
from tests.support.credits import credits_add, credits_of
from tests.webhooks_app.conftest import handling, post_event
from tests.webhooks_app.factories import WebhookSubscriptionFactory
from webhooks_app.models import InboundEvent, WebhookAttempt, WebhookDelivery, WebhookEvent

pytestmark = pytest.mark.django_db


@pytest.mark.parametrize(
    "url",
    [
        "/admin/webhooks_app/inboundevent/",
        "/admin/webhooks_app/inboundevent/?status__exact=failed&type__exact=test.admin&q=evt_",
        "/admin/webhooks_app/inbounddelivery/?outcome__exact=invalid_signature",
        "/admin/webhooks_app/webhooksubscription/",
        "/admin/webhooks_app/webhookdelivery/?status__exact=failed",
        "/admin/webhooks_app/webhookevent/",
    ],
)
def test_admin_lists_render(admin_client, url, alice):
    WebhookSubscriptionFactory(owner=alice)
    assert admin_client.get(url, secure=True).status_code == 200


def test_failed_events_are_reprocessed_from_the_admin(admin_client, api, alice):
    state = {"broken": True}

    def handler(event):
        if state["broken"]:
            raise RuntimeError("down")
        credits_add(alice, 1)

    signed = build_event("test.admin", {"id": "pi_admin"})
    with handling("test.admin", handler):
        assert post_event(api, signed).status_code == 500
        stored = InboundEvent.objects.get()
        assert admin_client.get(f"/admin/webhooks_app/inboundevent/{stored.pk}/change/", secure=True).status_code == 200
        state["broken"] = False

        response = admin_client.post(
            "/admin/webhooks_app/inboundevent/",
            {"action": "reprocess", "_selected_action": [str(stored.pk)]},
            secure=True,
        )

    assert response.status_code == 302
    stored.refresh_from_db()
    assert stored.status == "processed"
    alice.refresh_from_db()
    assert credits_of(alice) == 1


def test_the_subscription_page_never_shows_the_secrets(admin_client, alice):
    subscription = WebhookSubscriptionFactory(owner=alice, previous_secret="whsec_b2xkLW9uZQ==")

    html = admin_client.get(f"/admin/webhooks_app/webhooksubscription/{subscription.pk}/change/", secure=True)

    assert html.status_code == 200
    assert subscription.url in html.content.decode()
    assert subscription.secret not in html.content.decode()
    assert subscription.previous_secret not in html.content.decode()


def test_a_delivery_is_replayed_from_the_admin_and_shows_its_attempts(
    admin_client, alice, receiver, django_capture_on_commit_callbacks
):
    subscription = WebhookSubscriptionFactory(owner=alice, url=receiver.url)
    event = WebhookEvent.objects.create(owner=alice, type="task.created", body='{"type":"task.created"}')
    delivery = WebhookDelivery.objects.create(
        event=event, subscription=subscription, message_id="msg_replay", status="failed", attempt_count=8
    )
    WebhookAttempt.objects.create(delivery=delivery, number=8, url=receiver.url, status="failed", status_code=503)
    page = admin_client.get(f"/admin/webhooks_app/webhookdelivery/{delivery.pk}/change/", secure=True)
    assert page.status_code == 200
    assert "503" in page.content.decode()

    with django_capture_on_commit_callbacks(execute=True):
        response = admin_client.post(
            "/admin/webhooks_app/webhookdelivery/",
            {"action": "replay", "_selected_action": [str(delivery.pk)]},
            secure=True,
        )

    assert response.status_code == 302
    assert [r.headers["webhook-id"] for r in receiver.requests] == ["msg_replay"]
    delivery.refresh_from_db()
    assert (delivery.status, delivery.attempt_count) == ("succeeded", 9)
