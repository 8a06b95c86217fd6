"""The local webhook inbox (docs/guide.md#the-local-demo): it records every POST with whether the
signature verifies with the secret of the subscription whose URL it is, and lists them."""

from __future__ import annotations

import time

import pytest

from demo.models import InboxMessage
from signed_delivery.sending import message_body
from signed_delivery.signing import new_secret, sign_headers
from webhooks_app.services import webhook_subscription_create

pytestmark = [pytest.mark.django_db, pytest.mark.urls("tests.demo.urls")]


def post(api, token: str, secret: str, body: bytes | None = None):
    body = body or message_body("task.created", {"id": "t-1"})
    headers = sign_headers([secret], "msg_1", int(time.time()), body)
    meta = {f"HTTP_{name.upper().replace('-', '_')}": value for name, value in headers.items()}
    return api.post(f"/demo/inbox/{token}", data=body, content_type="application/json", **meta)


def test_a_delivery_signed_with_the_subscriptions_secret_is_recorded_as_verified(api, alice):
    subscription = webhook_subscription_create(
        owner=alice, url="https://127.0.0.1:8443/demo/inbox/ada", events=["task.created"]
    )

    response = post(api, "ada", subscription.secret)

    assert response.status_code == 200 and response.json() == {"received": True, "signature_verified": True}
    [item] = api.get("/demo/inbox/ada").json()["items"]
    assert (item["type"], item["signature_verified"]) == ("task.created", True)
    assert set(item["headers"]) >= {"webhook-id", "webhook-timestamp", "webhook-signature", "content-type"}
    page = api.get("/demo/inbox")
    assert page.status_code == 200 and b"signature verified" in page.content and b"task.created" in page.content


def test_a_wrong_signature_is_recorded_and_answered_401(api, alice):
    webhook_subscription_create(owner=alice, url="https://127.0.0.1:8443/demo/inbox/ada", events=["task.created"])

    response = post(api, "ada", new_secret())

    assert response.status_code == 401 and response.json()["code"] == "invalid_signature"
    assert InboxMessage.objects.get().signature_verified is False
    assert b"does NOT verify" in api.get("/demo/inbox").content


def test_without_a_subscription_the_post_is_kept_unchecked(api):
    response = post(api, "nobody", new_secret())

    assert response.status_code == 200 and response.json()["signature_verified"] is None
    assert api.get("/demo/inbox/other").json() == {"items": [], "total": 0}
