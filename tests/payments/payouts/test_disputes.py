"""Staff resolve a dispute with money, once (docs/payouts.md#disputes)."""

from __future__ import annotations

import json
from decimal import Decimal

import pytest
from django.test import Client

from payments.ledger_check import ledger_problems
from payments.models import Earning, LocalPayment, PaymentStatus
from tasks_market.models import Delivery, DisputeResolution, TaskStatus
from tasks_market.services.disputes import PARTY_REFUSED
from tests.conftest import client_with_token, jwt_for
from tests.payments.payouts.conftest import disputed, in_review, ledger_rows, payment_of, print_ledger, task_of
from tests.support.admin import actions_of
from tests.support.factories import UserFactory, permission_objects
from webhooks_app.models import WebhookEvent

pytestmark = pytest.mark.django_db


def resolve(client, task_id, **body):
    return client.post(
        f"/api/v1/disputes/{task_id}/resolve", {"note": "Half the copy was usable.", **body}, format="json"
    )


def test_a_split_refunds_part_and_releases_the_rest(alice_api, seller_api, seller, staff_api, api):
    hook = {"url": "https://hooks.example.com/x", "events": ["dispute.resolved"]}
    alice_api.post("/api/v1/webhooks/subscriptions", hook, format="json")
    task_id = disputed(alice_api, seller_api, api)["task"]["id"]

    response = resolve(staff_api, task_id, outcome="split", refund_amount="50.00")

    assert response.status_code == 200, response.content
    body = response.json()
    assert (body["outcome"], body["refund_amount"], body["release_amount"], body["fee"], body["net"]) == (
        "split",
        "50.00",
        "100.00",
        "10.00",
        "90.00",
    )
    assert (body["status"], body["task_status"], body["reason"]) == ("applied", "completed", "Not what we asked.")
    payment = payment_of(task_id)
    assert (payment.status, payment.refunded_amount) == (PaymentStatus.RELEASED, Decimal("50.00"))
    assert LocalPayment.objects.get(id=payment.provider_payment_id).amount_refunded_minor == 5000
    earning = Earning.objects.get(source=f"task:{task_id}")
    assert (earning.owner_id, earning.gross, earning.fee, earning.amount) == (
        seller.pk,
        Decimal("100.00"),
        Decimal("10.00"),
        Decimal("90.00"),
    )
    assert ledger_rows(task_id) == [
        ("captured", "platform:captured", "usd", Decimal("150.000")),
        ("captured", "platform:held", "usd", Decimal("-150.000")),
        ("captured", "platform:cash", "usd", Decimal("150.000")),
        ("captured", "outside", "usd", Decimal("-150.000")),
        ("refunded", "platform:held", "usd", Decimal("50.000")),
        ("refunded", "poster:refunds", "usd", Decimal("-50.000")),
        ("refunded", "outside", "usd", Decimal("50.000")),
        ("refunded", "platform:cash", "usd", Decimal("-50.000")),
        ("released", "platform:held", "usd", Decimal("100.000")),
        ("released", "platform:fees", "usd", Decimal("-10.000")),
        ("released", f"seller:{seller.pk}:pending", "usd", Decimal("-90.000")),
    ]
    print_ledger(task_id)
    assert ledger_problems() == []
    events = [json.loads(e.body)["data"] for e in WebhookEvent.objects.filter(type="dispute.resolved")]
    assert [(e["outcome"], e["refund_amount"]) for e in events] == [("split", "50.00")]


def test_refund_in_full_cancels_the_task(alice_api, seller_api, staff_api, api):
    task_id = disputed(alice_api, seller_api, api)["task"]["id"]

    response = resolve(staff_api, task_id, outcome="refund_full")

    assert response.status_code == 200, response.content
    assert task_of(task_id).status == TaskStatus.CANCELLED
    payment = payment_of(task_id)
    assert payment.status == PaymentStatus.REFUNDED
    assert LocalPayment.objects.get(id=payment.provider_payment_id).status == "refunded"
    assert not Earning.objects.exists()
    assert ledger_problems() == []


def test_release_in_full_pays_the_seller(alice_api, seller_api, staff_api, api):
    task_id = disputed(alice_api, seller_api, api)["task"]["id"]

    assert resolve(staff_api, task_id, outcome="release_full").status_code == 200

    assert task_of(task_id).status == TaskStatus.COMPLETED
    assert Earning.objects.get().amount == Decimal("135.00")
    assert ledger_problems() == []


def test_submitting_again_answers_the_same_and_a_different_decision_is_409(alice_api, seller_api, staff_api, api):
    task_id = disputed(alice_api, seller_api, api)["task"]["id"]
    first = resolve(staff_api, task_id, outcome="split", refund_amount="20.00")

    again = resolve(staff_api, task_id, outcome="split", refund_amount="20.00")
    other = resolve(staff_api, task_id, outcome="refund_full")

    assert again.status_code == 200 and again.json()["id"] == first.json()["id"]
    assert (other.status_code, other.json()["code"]) == (409, "invalid_state")
    assert DisputeResolution.objects.count() == 1
    assert LocalPayment.objects.get(id=payment_of(task_id).provider_payment_id).amount_refunded_minor == 2000
    assert ledger_problems() == []


def test_bad_input_is_422_and_a_task_not_disputed_is_409(alice_api, seller_api, staff_api, api):
    task_id = disputed(alice_api, seller_api, api)["task"]["id"]

    unknown = resolve(staff_api, task_id, outcome="coin_flip")
    no_amount = resolve(staff_api, task_id, outcome="split")
    too_much = resolve(staff_api, task_id, outcome="split", refund_amount="150.00")

    assert unknown.status_code == 422 and unknown.json()["detail"][0]["loc"] == ["body", "outcome"]
    assert no_amount.status_code == 422 and no_amount.json()["detail"][0]["loc"] == ["body", "refund_amount"]
    assert too_much.status_code == 422 and too_much.json()["detail"][0]["loc"] == ["body", "refund_amount"]
    assert not DisputeResolution.objects.exists()
    reviewing = in_review(alice_api, seller_api, api)["task"]["id"]
    not_disputed = resolve(staff_api, reviewing, outcome="release_full")
    assert (not_disputed.status_code, not_disputed.json()["code"]) == (409, "invalid_state")


def test_only_staff_resolve(alice_api, seller_api, api):
    task_id = disputed(alice_api, seller_api, api)["task"]["id"]

    response = resolve(alice_api, task_id, outcome="refund_full")

    assert response.status_code == 403
    assert task_of(task_id).status == TaskStatus.DISPUTED


def test_staff_resolve_in_the_admin(alice_api, seller_api, api, admin_client):
    task_id = disputed(alice_api, seller_api, api)["task"]["id"]
    url = f"/admin/tasks_market/disputeresolution/resolve/{task_id}/"

    page = admin_client.get(url, secure=True)
    done = admin_client.post(url, {"outcome": "split", "refund_amount": "30.00", "note": "Partly usable."}, secure=True)

    assert page.status_code == 200 and b"Not what we asked." in page.content
    assert done.status_code == 302
    resolution = DisputeResolution.objects.get()
    assert (resolution.outcome, resolution.refund_amount, resolution.status) == ("split", Decimal("30.00"), "applied")
    assert admin_client.get("/admin/tasks_market/disputeresolution/", secure=True).status_code == 200
    ledger = admin_client.get(f"/admin/payments/ledgerline/?source=task:{task_id}", secure=True)
    assert ledger.status_code == 200 and b"poster:refunds" in ledger.content
    for page in ("earning/?status=pending", "payout/", "payoutaccount/", "ledgerentry/"):
        assert admin_client.get(f"/admin/payments/{page}", secure=True).status_code == 200, page


# Who may resolve (docs/decisions.md#staff-permissions): staff with the permission, never a party to the task.

MAY_RESOLVE = ["tasks_market.add_disputeresolution"]


def make_staff(user, *, superuser: bool = False) -> None:
    user.is_staff, user.is_superuser = True, superuser
    user.save(update_fields=["is_staff", "is_superuser"])
    user.user_permissions.add(*permission_objects(MAY_RESOLVE))


def test_staff_without_the_permission_cannot_resolve(alice_api, seller_api, api):
    task_id = disputed(alice_api, seller_api, api)["task"]["id"]
    viewer = UserFactory(is_staff=True, permissions=["tasks_market.view_disputeresolution"])

    response = resolve(client_with_token(jwt_for(viewer)), task_id, outcome="refund_full")

    assert (response.status_code, response.json()["code"]) == (403, "permission_denied")
    assert task_of(task_id).status == TaskStatus.DISPUTED and not DisputeResolution.objects.exists()


def test_staff_with_the_permission_resolve(alice_api, seller_api, api):
    task_id = disputed(alice_api, seller_api, api)["task"]["id"]
    resolver = UserFactory(is_staff=True, permissions=MAY_RESOLVE)

    response = resolve(client_with_token(jwt_for(resolver)), task_id, outcome="refund_full")

    assert response.status_code == 200, response.content
    assert DisputeResolution.objects.get().resolved_by == resolver


@pytest.mark.parametrize("superuser", [False, True])
def test_the_poster_never_resolves_its_own_dispute(alice, alice_api, seller_api, api, superuser):
    task_id = disputed(alice_api, seller_api, api)["task"]["id"]
    make_staff(alice, superuser=superuser)

    response = resolve(alice_api, task_id, outcome="refund_full")

    assert response.status_code == 403, response.content
    assert response.json() == {"detail": PARTY_REFUSED, "code": "permission_denied"}
    assert task_of(task_id).status == TaskStatus.DISPUTED and not DisputeResolution.objects.exists()


@pytest.mark.parametrize("superuser", [False, True])
def test_the_seller_never_resolves_a_dispute_of_its_task(alice_api, seller, seller_api, api, superuser):
    task_id = disputed(alice_api, seller_api, api)["task"]["id"]
    make_staff(seller, superuser=superuser)

    response = resolve(seller_api, task_id, outcome="release_full")

    assert (response.status_code, response.json()["code"]) == (403, "permission_denied")
    assert task_of(task_id).status == TaskStatus.DISPUTED and not DisputeResolution.objects.exists()


def test_a_party_cannot_replay_a_resolution_either(alice, alice_api, seller_api, staff_api, api):
    task_id = disputed(alice_api, seller_api, api)["task"]["id"]
    assert resolve(staff_api, task_id, outcome="refund_full").status_code == 200
    make_staff(alice, superuser=True)

    assert resolve(alice_api, task_id, outcome="refund_full").status_code == 403


def test_a_party_gets_403_from_the_admin_resolve_form_and_action(alice, alice_api, seller_api, api):
    task_id = disputed(alice_api, seller_api, api)["task"]["id"]
    make_staff(alice, superuser=True)
    client = Client()
    client.force_login(alice)
    url = f"/admin/tasks_market/disputeresolution/resolve/{task_id}/"
    delivery = Delivery.objects.get(task_id=task_id)

    page = client.get(url, secure=True)
    post = client.post(url, {"outcome": "refund_full", "note": "Mine."}, secure=True)
    action = client.post(
        "/admin/tasks_market/delivery/", {"action": "resolve", "_selected_action": [str(delivery.pk)]}, secure=True
    )

    assert (page.status_code, post.status_code, action.status_code) == (403, 403, 403)
    assert task_of(task_id).status == TaskStatus.DISPUTED and not DisputeResolution.objects.exists()


def test_the_admin_resolve_form_and_action_need_the_permission(alice_api, seller_api, api):
    task_id = disputed(alice_api, seller_api, api)["task"]["id"]
    viewer = UserFactory(
        is_staff=True,
        permissions=["tasks_market.view_delivery", "tasks_market.view_disputeresolution"],
    )
    client = Client()
    client.force_login(viewer)

    page = client.get(f"/admin/tasks_market/disputeresolution/resolve/{task_id}/", secure=True)
    deliveries = client.get("/admin/tasks_market/delivery/", secure=True)
    resolutions = client.get("/admin/tasks_market/disputeresolution/", secure=True)

    assert page.status_code == 403
    assert deliveries.status_code == 200 and "resolve" not in actions_of(deliveries)
    assert resolutions.status_code == 200 and "finish" not in actions_of(resolutions)
