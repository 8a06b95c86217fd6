"""The local webhook inbox (docs/guide.md#the-local-demo, docs/decisions.md#the-local-webhook-inbox): it
records every POST with the subscription (or agent) whose URL is exactly this inbox's and whose secret
verifies the signature, and shows each message to that receiver's owner only, behind the API's token or
the admin's login."""

from __future__ import annotations

import time

import pytest
from django.test import Client

from demo.models import InboxMessage
from demo.services import inbox_url
from signed_delivery.sending import message_body
from signed_delivery.signing import new_secret, sign_headers
from tasks_market.services.agents import agent_register
from tests.conftest import client_with_token
from webhooks_app.services import webhook_subscription_create

pytestmark = [pytest.mark.django_db, pytest.mark.urls("tests.demo.urls")]


def post(api, token: str, secret: str, body: bytes | None = None):
    body = body or message_body("task.created", {"id": "t-1"})
    headers = sign_headers([secret], "msg_1", int(time.time()), body)
    meta = {f"HTTP_{name.upper().replace('-', '_')}": value for name, value in headers.items()}
    return api.post(f"/demo/inbox/{token}", data=body, content_type="application/json", **meta)


def subscribe(owner, url: str):
    return webhook_subscription_create(owner=owner, url=url, events=["task.created"])


def items(client, token: str) -> list[dict]:
    response = client.get(f"/demo/inbox/{token}")
    assert response.status_code == 200, response.content
    return response.json()["items"]


# --- Receiving -------------------------------------------------------------------------------------


def test_a_delivery_signed_with_the_subscriptions_secret_is_shown_to_its_owner(api, alice, alice_api):
    subscription = subscribe(alice, inbox_url("ada"))

    response = post(api, "ada", subscription.secret)

    assert response.status_code == 200 and response.json() == {"received": True, "signature_verified": True}
    [item] = items(alice_api, "ada")
    assert (item["type"], item["signature_verified"]) == ("task.created", True)
    assert set(item["headers"]) >= {"webhook-id", "webhook-timestamp", "webhook-signature", "content-type"}
    message = InboxMessage.objects.get()
    assert (message.owner, message.subscription_id, message.agent_id) == (alice, subscription.id, None)
    page = alice_api.get("/demo/inbox")
    assert page.status_code == 200 and b"signature verified" in page.content and b"task.created" in page.content
    assert "no-store" in page["Cache-Control"]


def test_a_wrong_signature_is_recorded_answered_401_and_shown_to_nobody(api, alice, alice_api):
    subscribe(alice, inbox_url("ada"))

    response = post(api, "ada", new_secret())

    assert response.status_code == 401 and response.json()["code"] == "invalid_signature"
    message = InboxMessage.objects.get()
    assert (message.signature_verified, message.owner) == (False, None)
    assert items(alice_api, "ada") == []
    assert b"task.created" not in alice_api.get("/demo/inbox").content


def test_without_a_subscription_the_post_is_kept_unchecked_and_shown_to_nobody(api, alice_api):
    response = post(api, "nobody", new_secret())

    assert response.status_code == 200 and response.json()["signature_verified"] is None
    assert InboxMessage.objects.get().owner is None
    assert alice_api.get("/demo/inbox/nobody").json() == {"items": [], "total": 0}


def test_an_agents_dispatch_is_shown_to_the_agents_owner(api, alice, alice_api):
    agent = agent_register(owner=alice, name="copybot", endpoint_url=inbox_url("copybot"), capabilities=["content"])

    assert post(api, "copybot", agent.signing_secret).status_code == 200

    [item] = items(alice_api, "copybot")
    assert item["signature_verified"] is True
    assert InboxMessage.objects.get().agent_id == agent.id


# --- Exact URLs ------------------------------------------------------------------------------------


def test_a_subscription_whose_url_merely_ends_the_same_way_signs_nothing(api, alice, bob, alice_api, bob_api):
    """Bob subscribes another origin's URL with the same inbox name: his secret is not this inbox's, so a
    delivery he signs is refused, neither verified for Alice nor shown to either."""
    subscribe(alice, inbox_url("ada"))
    bobs = subscribe(bob, "https://elsewhere.example/demo/inbox/ada")

    response = post(api, "ada", bobs.secret)

    assert response.status_code == 401
    assert InboxMessage.objects.get().signature_verified is False
    assert items(alice_api, "ada") == [] and items(bob_api, "ada") == []


def test_a_newer_look_alike_subscription_does_not_shadow_the_exact_one(api, alice, bob, alice_api, settings):
    """Newer subscriptions of Bob's whose URLs end like Alice's inbox (another origin, a longer path on this
    one) take no part in checking her deliveries."""
    alices = subscribe(alice, inbox_url("ada"))
    subscribe(bob, "https://elsewhere.example/demo/inbox/ada")
    subscribe(bob, f"{settings.PUBLIC_BASE_URL}/other/demo/inbox/ada")

    assert post(api, "ada", alices.secret).json() == {"received": True, "signature_verified": True}
    assert len(items(alice_api, "ada")) == 1


def test_two_owners_of_the_same_exact_url_each_see_only_what_their_secret_signed(api, alice, bob, alice_api, bob_api):
    alices = subscribe(alice, inbox_url("shared"))
    bobs = subscribe(bob, inbox_url("shared"))

    post(api, "shared", alices.secret, message_body("task.created", {"id": "for-alice"}))
    post(api, "shared", bobs.secret, message_body("bid.created", {"id": "for-bob"}))

    assert [i["type"] for i in items(alice_api, "shared")] == ["task.created"]
    assert [i["type"] for i in items(bob_api, "shared")] == ["bid.created"]
    assert b"for-bob" not in alice_api.get("/demo/inbox").content
    assert b"for-alice" not in bob_api.get("/demo/inbox").content


def test_forged_deliveries_do_not_push_out_an_owners_own(api, alice, alice_api, monkeypatch):
    monkeypatch.setattr("demo.services.INBOX_KEEP", 2)
    alices = subscribe(alice, inbox_url("ada"))
    post(api, "ada", alices.secret)

    for _ in range(3):
        post(api, "ada", new_secret())

    assert InboxMessage.objects.filter(owner=None).count() == 2  # the cap counts per inbox and owner
    assert len(items(alice_api, "ada")) == 1


# --- Who may read ----------------------------------------------------------------------------------


def test_anonymous_gets_401_on_the_json_and_the_login_page_for_the_page(api, alice):
    subscribe(alice, inbox_url("ada"))

    listing = api.get("/demo/inbox/ada")
    page = api.get("/demo/inbox")

    assert listing.status_code == 401 and listing.json()["code"] == "not_authenticated"
    assert listing["WWW-Authenticate"] == "Bearer"
    assert page.status_code == 302 and page["Location"].startswith("/admin/login/?next=/demo/inbox")


def test_a_bad_token_is_401_on_both():
    client = client_with_token("not-a-token")

    assert client.get("/demo/inbox/ada").status_code == 401
    assert client.get("/demo/inbox").status_code == 401


def test_user_a_does_not_see_user_bs_deliveries(api, alice, bob, alice_api, bob_api):
    bobs = subscribe(bob, inbox_url("bobs"))
    post(api, "bobs", bobs.secret, message_body("task.created", {"secret-of": "bob"}))

    assert items(alice_api, "bobs") == []
    page = alice_api.get("/demo/inbox")
    assert page.status_code == 200 and b"secret-of" not in page.content and b"Nothing received yet" in page.content
    assert len(items(bob_api, "bobs")) == 1


def test_an_api_key_reads_the_json(api, alice, alice_key_api):
    alices = subscribe(alice, inbox_url("ada"))
    post(api, "ada", alices.secret)

    assert len(items(alice_key_api, "ada")) == 1


def test_the_admin_login_session_reads_the_page(api, alice, bob):
    alices = subscribe(alice, inbox_url("ada"))
    bobs = subscribe(bob, inbox_url("bobs"))
    post(api, "ada", alices.secret, message_body("task.created", {"marker": "alice-7f3a"}))
    post(api, "bobs", bobs.secret, message_body("task.created", {"marker": "bob-7f3a"}))
    browser = Client()
    browser.force_login(alice)

    page = browser.get("/demo/inbox", secure=True)

    assert page.status_code == 200 and b"alice-7f3a" in page.content and b"bob-7f3a" not in page.content
