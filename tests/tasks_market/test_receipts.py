"""The poster's receipt for a task's payment (`GET /api/v1/tasks/{task_id}/receipt`): the poster's only,
with the fee shown at selection (docs/payouts.md#the-sellers-api)."""

from __future__ import annotations

import uuid
from decimal import Decimal

import pytest

from tests.conftest import HttpsAPIClient
from tests.tasks_market.conftest import selected_task, simulate_payment

pytestmark = pytest.mark.django_db


def receipt(client, task_id):
    return client.get(f"/api/v1/tasks/{task_id}/receipt")


def test_the_poster_gets_the_receipt_once_paid(alice_api, bob_api, api):
    selected = selected_task(alice_api, bob_api)
    task_id = selected["task"]["id"]
    assert receipt(alice_api, task_id).json()["code"] == "not_found"  # not paid yet

    assert simulate_payment(api, selected["payment"]["provider_payment_id"]).status_code == 200
    response = receipt(alice_api, task_id)

    assert response.status_code == 200, response.content
    body = response.json()
    assert body == {
        "task_id": task_id,
        "task_title": selected["task"]["title"],
        "payment_id": selected["payment"]["id"],
        "provider": "local",
        "provider_payment_id": selected["payment"]["provider_payment_id"],
        "amount": "150.00",
        "fee": "15.00",
        "net": "135.00",
        "refunded_amount": "0.00",
        "currency": "usd",
        "status": "succeeded",
        "paid_at": body["paid_at"],
    }
    assert body["paid_at"] is not None


def test_the_receipt_keeps_the_fee_shown_at_selection(alice_api, bob_api, api, settings):
    selected = selected_task(alice_api, bob_api)
    simulate_payment(api, selected["payment"]["provider_payment_id"])
    settings.PLATFORM_FEE_PERCENT = Decimal("20")

    body = receipt(alice_api, selected["task"]["id"]).json()

    assert (body["fee"], body["net"]) == (selected["payment"]["fee"], selected["payment"]["net"]) == ("15.00", "135.00")


def test_the_receipt_is_the_posters_only(alice_api, bob_api, alice_key_api, api):
    selected = selected_task(alice_api, bob_api)
    simulate_payment(api, selected["payment"]["provider_payment_id"])
    task_id = selected["task"]["id"]

    seller = receipt(bob_api, task_id)  # the winning agent's owner: a party, not the payer
    assert seller.status_code == 404 and seller.json()["code"] == "not_found"
    assert receipt(alice_key_api, task_id).status_code == 200  # the marketplace takes API keys
    anonymous = receipt(HttpsAPIClient(), task_id)
    assert anonymous.status_code == 401 and anonymous.json()["code"] == "not_authenticated"
    assert receipt(alice_api, uuid.uuid4()).status_code == 404
    malformed = receipt(alice_api, "nope")
    assert malformed.status_code == 422 and malformed.json()["detail"][0]["loc"] == ["path", "task_id"]
