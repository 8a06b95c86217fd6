"""The seller's statement (`GET /api/v1/payouts/activity`) and what each payout paid
(`GET /api/v1/payouts/{payout_id}`), read from the ledger (docs/payouts.md#the-sellers-api)."""

from __future__ import annotations

import uuid
from decimal import Decimal

import pytest

from payments.ledger import seller_balances
from payments.models import Earning, Payout
from payments.services.payouts import payouts_run
from tests.conftest import HttpsAPIClient, client_with_token, jwt_for
from tests.payments.payouts.conftest import in_review, onboard
from tests.payments.payouts.test_chargebacks import chargeback
from tests.support.factories import UserFactory

pytestmark = pytest.mark.django_db


def released(alice_api, seller_api, api) -> Earning:
    task_id = in_review(alice_api, seller_api, api)["task"]["id"]
    assert alice_api.post(f"/api/v1/tasks/{task_id}/delivery/approve").status_code == 200
    return Earning.objects.get(source=f"task:{task_id}")


def activity(client, query: str = "") -> dict:
    response = client.get(f"/api/v1/payouts/activity{query}")
    assert response.status_code == 200, response.content
    return response.json()


def every_item(client, limit: int) -> list[dict]:
    """The whole statement, page after page by `next_cursor`."""
    body = activity(client, f"?limit={limit}")
    items = body["items"]
    while body["next_cursor"]:
        body = activity(client, f"?limit={limit}&cursor={body['next_cursor']}")
        items += body["items"]
    return items


def test_the_statement_lists_every_movement_newest_first_with_its_reason_and_the_balance_after(
    alice_api, seller_api, seller, api
):
    onboard(seller)
    earning = released(alice_api, seller_api, api)
    payouts_run()
    payout = Payout.objects.get()

    body = activity(seller_api)

    rows = [(i["kind"], i["state"], i["amount"], i["balance_after"], i["currency"], i["source"]) for i in body["items"]]
    task, paid = earning.source, f"payout:{payout.id}"
    # Oldest first, as posted: released, then the hold ended (pending -> available), then the payout.
    assert list(reversed(rows)) == [
        ("released", "pending", "135.00", "135.00", "usd", task),
        ("available", "pending", "-135.00", "0.00", "usd", task),
        ("available", "available", "135.00", "135.00", "usd", task),
        ("payout", "available", "-135.00", "0.00", "usd", paid),
        ("payout", "paid_out", "135.00", "135.00", "usd", paid),
    ]
    assert [i["id"] for i in body["items"]] == sorted((i["id"] for i in body["items"]), reverse=True)
    assert (body["total"], body["has_more"], body["next_cursor"]) == (5, False, None)
    reasons = {i["kind"]: i["reason"] for i in body["items"]}
    assert reasons["released"] == f"Released for task {earning.source.split(':')[1]}"
    assert reasons["payout"] == "Paid out"
    assert all(i["created_at"] for i in body["items"])
    # The last balance of each state is the balance endpoint's.
    assert seller_balances(seller.pk)["usd"]["paid_out"] == Decimal(body["items"][0]["balance_after"])


def test_a_chargeback_after_the_payout_says_so(alice_api, seller_api, seller, api):
    onboard(seller)
    earning = released(alice_api, seller_api, api)
    payouts_run()
    chargeback(api, "charge.dispute.created", earning, "needs_response")

    items = activity(seller_api)["items"]

    debit = [i for i in items if i["kind"] == "chargeback_debited"]
    assert {(i["state"], i["amount"], i["balance_after"]) for i in debit} == {
        ("available", "-135.00", "-135.00"),
        ("chargebacks", "135.00", "135.00"),
    }
    assert debit[0]["reason"] == f"Chargeback on task {earning.source.split(':')[1]}"


def test_pages_by_cursor_carry_the_same_balances_as_one_page(alice_api, seller_api, seller, api):
    onboard(seller)
    released(alice_api, seller_api, api)
    payouts_run()
    released(alice_api, seller_api, api)

    whole = activity(seller_api, "?limit=100")["items"]
    paged = every_item(seller_api, limit=2)

    assert paged == whole and len(whole) == 6  # released, settled (2), paid out (2), released
    deep = activity(seller_api, "?limit=2&offset=2")
    assert deep["items"] == whole[2:4] and deep["total"] == 6 and deep["has_more"]


def test_the_statement_filters_by_currency_and_shows_only_ones_own(alice_api, bob_api, seller_api, seller, api):
    released(alice_api, seller_api, api)

    assert activity(seller_api, "?currency=USD")["total"] == 1  # released, held
    assert activity(seller_api, "?currency=eur") == {
        "items": [],
        "total": 0,
        "has_more": False,
        "next_cursor": None,
        "total_exact": True,
    }
    assert activity(bob_api)["total"] == 0  # bob's own: none
    assert activity(alice_api)["total"] == 0  # the poster is not the seller


@pytest.mark.parametrize(
    ("query", "loc", "type_"),
    [
        ("?cursor=not-a-cursor", ["query", "cursor"], "value_error"),
        ("?cursor=WyIxIl0&offset=3", ["query", "offset"], "value_error"),
        ("?currency=dollars", ["query", "currency"], "value_error"),
        ("?currency=u1d", ["query", "currency"], "value_error"),
        ("?limit=0", ["query", "limit"], "greater_than_equal"),
        ("?limit=101", ["query", "limit"], "less_than_equal"),
    ],
)
def test_bad_queries_are_422_in_the_contracts_shape(seller_api, query, loc, type_):
    response = seller_api.get(f"/api/v1/payouts/activity{query}")

    assert response.status_code == 422, response.content
    errors = response.json()["detail"]
    assert [(e["loc"], e["type"]) for e in errors] == [(loc, type_)]


def test_the_statement_is_for_signed_in_users_only(alice_key_api):
    anonymous = HttpsAPIClient().get("/api/v1/payouts/activity")
    assert anonymous.status_code == 401 and anonymous.json()["code"] == "not_authenticated"
    keyed = alice_key_api.get("/api/v1/payouts/activity")
    assert keyed.status_code == 403 and keyed.json()["code"] == "api_key_not_allowed"


# What a payout paid -------------------------------------------------------------------------------------


def test_a_payout_lists_the_earnings_it_paid_and_the_debts_it_netted(alice_api, seller_api, seller, api):
    onboard(seller)
    first = released(alice_api, seller_api, api)
    payouts_run()
    chargeback(api, "charge.dispute.created", first, "needs_response")  # after payout: a debt of 135.00
    second = released(alice_api, seller_api, api)
    payouts_run()  # 135.00 - 135.00: nothing to pay
    third = released(alice_api, seller_api, api)
    payouts_run()
    one, two = Payout.objects.order_by("created_at")

    shown_one = seller_api.get(f"/api/v1/payouts/{one.id}").json()
    shown_two = seller_api.get(f"/api/v1/payouts/{two.id}").json()

    assert [(e["id"], e["source"], e["net"]) for e in shown_one["earnings"]] == [
        (str(first.id), first.source, "135.00")
    ]
    assert shown_one["debts"] == []
    assert {e["id"] for e in shown_two["earnings"]} == {str(second.id), str(third.id)}
    [debt] = shown_two["debts"]
    assert (debt["kind"], debt["source"], debt["amount"], debt["currency"]) == (
        "chargeback_debited",
        first.source,
        "135.00",
        "usd",
    )
    assert debt["reason"].startswith("Chargeback on task")
    earned = sum(Decimal(e["net"]) for e in shown_two["earnings"])
    netted = sum(Decimal(d["amount"]) for d in shown_two["debts"])
    assert earned - netted == Decimal(shown_two["amount"]) == Decimal("135.00")
    assert shown_two["status"] == "paid"
    assert shown_two["transfer_id"] == (two.transfer_id or None)
    listed = seller_api.get("/api/v1/payouts").json()["items"]
    assert {p["id"]: p["transfer_id"] for p in listed} == {str(p.id): p.transfer_id or None for p in (one, two)}


def test_a_payout_is_its_owners_only(alice_api, seller_api, seller, api):
    onboard(seller)
    released(alice_api, seller_api, api)
    payouts_run()
    payout = Payout.objects.get()
    other = client_with_token(jwt_for(UserFactory()))

    assert other.get(f"/api/v1/payouts/{payout.id}").json()["code"] == "not_found"
    assert seller_api.get(f"/api/v1/payouts/{uuid.uuid4()}").status_code == 404
    malformed = seller_api.get("/api/v1/payouts/nope")
    assert malformed.status_code == 422 and malformed.json()["detail"][0]["loc"] == ["path", "payout_id"]
    assert HttpsAPIClient().get(f"/api/v1/payouts/{payout.id}").status_code == 401
