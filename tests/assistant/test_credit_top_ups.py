"""Credits: the signup grant, the packs on sale, buying one through the payment provider, and the ledger."""

from __future__ import annotations

import re
import threading
from decimal import Decimal

import pytest
from django.db import connection

from accounts.models import User
from assistant.models import CreditTopUp, CreditTransaction
from assistant.services import credits_adjust
from payments.models import LocalPayment
from payments.provider_events import build_event
from payments.providers.local import LocalPaymentProvider, payment_event_object
from tests.conftest import HttpsAPIClient, client_with_token, jwt_for
from tests.support.credits import credits_of
from tests.support.factories import UserFactory

pytestmark = pytest.mark.django_db

CREDITS = "/api/v1/allmodelchat/credits"
TOP_UP = "/api/v1/allmodelchat/credits/top-up"
LEDGER = "/api/v1/allmodelchat/credits/transactions"


def post_event(client, event):
    return client.post(
        "/api/v1/webhooks/payments",
        data=event.body,
        content_type="application/json",
        HTTP_PAYMENTS_SIGNATURE=event.headers["Payments-Signature"],
    )


def settle(provider_payment_id: str, outcome: str):
    """The payer pays (or the card is declined) at the local provider: the signed event it would send."""
    _, event = LocalPaymentProvider().simulate_payment(provider_payment_id, outcome)
    return event


def another_copy(provider_payment_id: str, event_type: str = "payment_intent.succeeded"):
    """A fresh event (new id) about the payment as it is now: what a provider retry or a duplicate looks like."""
    return build_event(event_type, payment_event_object(LocalPayment.objects.get(id=provider_payment_id)))


# --- Signup grant -------------------------------------------------------------------------------------


def _register_and_verify(api, mailoutbox, capture) -> tuple[User, dict]:
    """Sign-up credits come with the verified address (docs/decisions.md#identity-and-authentication)."""
    with capture(execute=True):
        response = api.post("/api/v1/auth/register", {"email": "new@example.com", "password": "correct horse battery"})
    assert response.status_code == 201, response.content
    assert response.json()["credits"] == 0
    user = User.objects.get(pk=response.json()["id"])
    token = re.search(r'"token": "([^"]+)"', mailoutbox[-1].body).group(1)
    verified = client_with_token(jwt_for(user)).post("/api/v1/auth/email/verify", {"token": token}, format="json")
    assert verified.status_code == 200, verified.content
    return user, verified.json()


def test_verifying_the_address_grants_the_signup_credits_as_a_ledger_grant(
    api, settings, mailoutbox, django_capture_on_commit_callbacks
):
    settings.SIGNUP_CREDITS = 12
    user, me = _register_and_verify(api, mailoutbox, django_capture_on_commit_callbacks)

    assert me["credits"] == 12
    [grant] = CreditTransaction.objects.filter(user=user)
    assert (grant.kind, grant.delta, grant.balance_after) == ("grant", 12, 12)


def test_no_signup_credits_means_no_grant(api, settings, mailoutbox, django_capture_on_commit_callbacks):
    settings.SIGNUP_CREDITS = 0
    user, _ = _register_and_verify(api, mailoutbox, django_capture_on_commit_callbacks)

    user.refresh_from_db()
    assert credits_of(user) == 0 and not CreditTransaction.objects.filter(user=user).exists()


# --- Packs and top-ups ----------------------------------------------------------------------------------


def test_the_balance_comes_with_the_packs_on_sale(alice_api, alice, settings):
    credits_adjust(user=alice, delta=3, reason="test")

    body = alice_api.get(CREDITS).json()

    assert body["credits"] == 3
    assert body["packs"] == [
        {"id": p["id"], "credits": p["credits"], "price": f"{p['price']:.2f}", "currency": p["currency"]}
        for p in settings.CREDIT_PACKS
    ]


def test_a_top_up_is_a_payment_with_a_checkout_page(alice_api, alice, settings):
    settings.PUBLIC_BASE_URL = "https://pay.example.test:8443"
    pack = settings.CREDIT_PACKS[0]

    response = alice_api.post(TOP_UP, {"pack": pack["id"], "success_url": "https://app.example.com/ok"}, format="json")

    assert response.status_code == 201, response.content
    body = response.json()
    top_up = CreditTopUp.objects.get(id=body["id"])
    assert body == {
        "id": str(top_up.id),
        "provider": "local",
        "provider_payment_id": top_up.provider_payment_id,
        "amount": f"{pack['price']:.2f}",
        "currency": pack["currency"],
        "status": "requires_payment",
        "client_secret": top_up.client_secret,
        "checkout_url": top_up.checkout_url,
    }
    assert body["checkout_url"].startswith("https://pay.example.test:8443/checkout/")
    payment = LocalPayment.objects.get(id=top_up.provider_payment_id)
    assert payment.metadata["kind"] == "credit_top_up" and payment.metadata["user_id"] == str(alice.id)
    assert payment.checkout_session.success_url == "https://app.example.com/ok"
    alice.refresh_from_db()
    assert credits_of(alice) == 0  # nothing until the payment succeeds


@pytest.mark.parametrize(
    "body",
    [{"pack": "no-such-pack"}, {}, {"pack": "small", "success_url": "javascript:alert(1)"}],
    ids=["unknown pack", "no pack", "bad success_url"],
)
def test_a_bad_top_up_is_422_and_creates_nothing(alice_api, body):
    response = alice_api.post(TOP_UP, body, format="json")

    assert response.status_code == 422, response.content
    assert response.json()["detail"][0]["loc"][0] == "body"
    assert not CreditTopUp.objects.exists() and not LocalPayment.objects.exists()


def test_top_ups_and_the_ledger_take_a_jwt_only(api, alice_key_api):
    assert api.post(TOP_UP, {"pack": "small"}, format="json").status_code == 401
    assert alice_key_api.post(TOP_UP, {"pack": "small"}, format="json").status_code == 403
    assert alice_key_api.get(LEDGER).status_code == 403
    assert not CreditTopUp.objects.exists()


def _top_up(client, pack: str = "small") -> CreditTopUp:
    response = client.post(TOP_UP, {"pack": pack}, format="json")
    assert response.status_code == 201, response.content
    return CreditTopUp.objects.get(id=response.json()["id"])


def test_a_paid_top_up_adds_the_pack_once_whatever_the_provider_repeats(api, alice_api, alice, settings):
    top_up = _top_up(alice_api)

    assert post_event(api, settle(top_up.provider_payment_id, "succeeded")).json()["status"] == "processed"
    assert post_event(api, another_copy(top_up.provider_payment_id)).json()["status"] == "processed"
    late_failure = another_copy(top_up.provider_payment_id, "payment_intent.payment_failed")
    post_event(api, late_failure)

    alice.refresh_from_db()
    assert credits_of(alice) == top_up.credits
    [purchase] = CreditTransaction.objects.filter(user=alice, kind="purchase")
    assert (purchase.delta, purchase.reference) == (top_up.credits, str(top_up.id))
    top_up.refresh_from_db()
    assert top_up.status == "succeeded" and top_up.credited_at is not None


@pytest.mark.parametrize(
    ("field", "value"), [("amount", 1), ("amount_received", 1), ("currency", "eur"), ("amount", "499")]
)
def test_a_success_for_other_money_is_rejected_and_credits_nothing(api, alice_api, alice, field, value):
    """As for task payments (docs/decisions.md#payments-webhook-inbound): a signed success whose amount or
    currency is not the pack's."""
    top_up = _top_up(alice_api)
    LocalPayment.objects.filter(id=top_up.provider_payment_id).update(status="succeeded")
    obj = payment_event_object(LocalPayment.objects.get(id=top_up.provider_payment_id)) | {field: value}

    response = post_event(api, build_event("payment_intent.succeeded", obj))

    assert response.status_code == 200
    assert response.json()["status"] == "rejected"
    alice.refresh_from_db()
    assert credits_of(alice) == 0
    assert CreditTopUp.objects.get(pk=top_up.pk).status == "requires_payment"
    assert not CreditTransaction.objects.filter(user=alice, kind="purchase").exists()


def test_a_failed_top_up_adds_nothing_and_a_later_success_adds_the_pack(api, alice_api, alice):
    top_up = _top_up(alice_api)

    post_event(api, settle(top_up.provider_payment_id, "failed"))
    alice.refresh_from_db()
    assert credits_of(alice) == 0
    assert CreditTopUp.objects.get(pk=top_up.pk).status == "failed"

    # The payer retries the same payment at the provider and it goes through.
    LocalPayment.objects.filter(id=top_up.provider_payment_id).update(status="requires_payment")
    post_event(api, settle(top_up.provider_payment_id, "succeeded"))
    alice.refresh_from_db()
    assert credits_of(alice) == top_up.credits


def test_events_for_task_payments_leave_credits_alone(api, alice):
    payment = LocalPaymentProvider().create_payment(
        amount=Decimal("5.00"),
        currency="usd",
        metadata={"task_id": "t", "bid_id": "b"},
        idempotency_key="bid-select:b:0",
    )
    post_event(api, settle(payment.id, "succeeded"))

    alice.refresh_from_db()
    assert credits_of(alice) == 0 and not CreditTransaction.objects.exists()


@pytest.mark.django_db(transaction=True)
def test_ten_concurrent_copies_of_the_success_credit_the_pack_once():
    user = UserFactory()
    top_up = _top_up(client_with_token(jwt_for(user)))
    events = [settle(top_up.provider_payment_id, "succeeded")]
    events += [another_copy(top_up.provider_payment_id) for _ in range(9)]
    barrier = threading.Barrier(len(events))
    statuses: list[int] = []

    def deliver(event):
        client = HttpsAPIClient()
        try:
            barrier.wait()
            statuses.append(post_event(client, event).status_code)
        finally:
            connection.close()

    threads = [threading.Thread(target=deliver, args=(event,)) for event in events]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(timeout=60)

    assert statuses == [200] * 10
    user.refresh_from_db()
    assert credits_of(user) == top_up.credits
    assert CreditTransaction.objects.filter(user=user, kind="purchase").count() == 1


# --- The ledger --------------------------------------------------------------------------------------------


def test_the_ledger_lists_every_change_newest_first_in_pages(alice_api, alice, staff):
    credits_adjust(user=alice, delta=10, reason="one", actor=staff)
    credits_adjust(user=alice, delta=-4, reason="two", actor=staff)
    credits_adjust(user=alice, delta=5, reason="three", actor=staff)
    credits_adjust(user=UserFactory(), delta=7, reason="someone else's")

    first = alice_api.get(LEDGER, {"limit": 2}).json()
    rest = alice_api.get(LEDGER, {"limit": 2, "offset": 2}).json()

    assert [t["reason"] for t in first["items"]] == ["three", "two"]
    assert (first["total"], first["has_more"]) == (3, True)
    assert [(t["reason"], t["delta"], t["balance_after"]) for t in rest["items"]] == [("one", 10, 10)]
    assert (rest["total"], rest["has_more"]) == (3, False)
    assert set(first["items"][0]) == {"id", "kind", "delta", "balance_after", "reason", "reference", "created_at"}


def test_a_bad_ledger_page_is_422(alice_api):
    response = alice_api.get(LEDGER, {"limit": 0})

    assert response.status_code == 422
    assert response.json()["detail"][0]["loc"] == ["query", "limit"]
