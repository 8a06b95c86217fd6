"""The sellers' API and the local hosted onboarding page (docs/payouts.md#the-sellers-api)."""

from __future__ import annotations

from decimal import Decimal

import pytest
from django.test import Client
from django.utils.dateparse import parse_datetime

from payments.models import Earning, LocalConnectObject, PayoutAccount
from payments.onboarding import OnboardingInvalid, bank_account_parse, iban_valid, routing_valid
from payments.provider_events import build_event
from payments.services.payouts import payouts_run
from tests.payments.payouts.conftest import in_review, onboard

pytestmark = pytest.mark.django_db


def start(client) -> dict:
    response = client.post("/api/v1/payouts/account", {"return_url": "https://app.example.com/done"}, format="json")
    assert response.status_code == 200, response.content
    return response.json()


def test_onboarding_starts_once_and_the_hosted_page_activates_the_account(seller_api, seller, api):
    assert seller_api.get("/api/v1/payouts/account").status_code == 404

    first = start(seller_api)
    second = start(seller_api)

    assert first["account"]["id"] == second["account"]["id"]
    assert (first["account"]["status"], first["account"]["payouts_enabled"]) == ("onboarding", False)
    assert first["onboarding_url"] != second["onboarding_url"]  # a fresh link each time
    path = "/" + first["onboarding_url"].split("/", 3)[3]
    browser = Client()
    page = browser.get(path, secure=True)
    assert page.status_code == 200 and b"Set up payouts" in page.content

    bad = browser.post(path, {"display_name": "Bob", "iban": "DE00 0000 0000 0000 0000 00"}, secure=True)
    assert bad.status_code == 400 and b"IBAN is not valid" in bad.content
    assert seller_api.get("/api/v1/payouts/account").json()["status"] == "onboarding"

    form = {"display_name": "Bob Seller", "routing_number": "110000000", "account_number": "000123456789"}
    done = browser.post(path, form, secure=True)

    assert done.status_code == 200 and b"Payouts are set up" in done.content
    account = seller_api.get("/api/v1/payouts/account").json()
    assert (account["status"], account["payouts_enabled"], account["display_name"]) == ("active", True, "Bob Seller")
    again = {"display_name": "Again", "iban": "DE89370400440532013000"}
    assert browser.post(path, again, secure=True).status_code == 409
    assert browser.get("/payouts/onboarding/" + "x" * 40, secure=True).status_code == 404


def test_account_updated_events_keep_the_account_current(seller_api, seller, api):
    account_id = start(seller_api)["account"]["id"]
    provider_id = PayoutAccount.objects.get(pk=account_id).provider_account_id
    obj = {
        "id": provider_id,
        "object": "account",
        "charges_enabled": False,
        "payouts_enabled": False,
        "details_submitted": True,
        "requirements": {"currently_due": ["external_account"], "disabled_reason": "requirements.past_due"},
    }
    event = build_event("account.updated", obj)

    response = api.post(
        "/api/v1/webhooks/payments",
        data=event.body,
        content_type="application/json",
        HTTP_PAYMENTS_SIGNATURE=event.headers["Payments-Signature"],
    )

    assert response.json()["status"] == "processed"
    shown = seller_api.get("/api/v1/payouts/account").json()
    assert (shown["status"], shown["payouts_enabled"], shown["requirements"]) == (
        "restricted",
        False,
        ["external_account"],
    )


def test_balance_earnings_and_payouts_lists(alice_api, seller_api, seller, api):
    assert seller_api.get("/api/v1/payouts/balance").json() == {"items": []}
    task_id = in_review(alice_api, seller_api, api)["task"]["id"]
    alice_api.post(f"/api/v1/tasks/{task_id}/delivery/approve")
    onboard(seller)
    payouts_run()

    earnings = seller_api.get("/api/v1/payouts/earnings").json()
    payouts = seller_api.get("/api/v1/payouts?limit=1").json()

    assert (earnings["total"], earnings["has_more"]) == (1, False)
    row = earnings["items"][0]
    assert (row["task_id"], row["gross"], row["fee"], row["amount"], row["status"]) == (
        task_id,
        "150.00",
        "15.00",
        "135.00",
        "paid_out",
    )
    assert row["available_at"] is not None and row["paid_out_at"] is not None
    assert row["net"] == row["amount"] == "135.00"  # `amount` is the deprecated name of `net`
    assert row["hold_reason"] is None  # paid out: nothing holds it
    assert payouts["items"][0]["amount"] == "135.00" and payouts["items"][0]["status"] == "paid"
    assert alice_api.get("/api/v1/payouts/earnings").json()["total"] == 0  # one's own only
    assert seller_api.get("/api/v1/payouts/earnings?limit=0").status_code == 422


def test_bids_and_payments_show_fee_and_net(alice_api, seller_api, api, settings):
    settings.PLATFORM_FEE_PERCENT = Decimal("12.5")
    task_id = in_review(alice_api, seller_api, api)["task"]["id"]

    bid = alice_api.get(f"/api/v1/tasks/{task_id}/bids").json()["items"][0]

    assert (bid["amount"], bid["fee"], bid["net"]) == ("150.00", "18.75", "131.25")


def test_bank_account_rules():
    assert iban_valid("DE89370400440532013000") and not iban_valid("DE89370400440532013001")
    assert routing_valid("110000000") and not routing_valid("110000001")
    assert bank_account_parse(iban="de89 3704 0044 0532 0130 00") == "DE89370400440532013000"
    for bad in ({}, {"routing_number": "110000000", "account_number": "12"}, {"iban": "XX"}):
        with pytest.raises(OnboardingInvalid):
            bank_account_parse(**bad)


def test_an_expired_onboarding_link_says_so(seller_api, api):
    url = start(seller_api)["onboarding_url"]
    link_id = url.rsplit("/", 1)[1]
    LocalConnectObject.objects.filter(id=link_id).update(expires_at="2000-01-01T00:00:00Z")

    assert Client().get(f"/payouts/onboarding/{link_id}", secure=True).status_code == 410


def test_an_unverified_seller_cannot_start_a_payout_account(seller_api, seller):
    """Money goes only to an account whose address is proven (docs/decisions.md#identity-and-authentication)."""
    seller.email_verified_at = None
    seller.save(update_fields=["email_verified_at"])

    response = seller_api.post("/api/v1/payouts/account", {}, format="json")

    assert response.status_code == 403 and response.json()["code"] == "email_unverified"
    assert not PayoutAccount.objects.filter(owner=seller).exists()
    assert not LocalConnectObject.objects.exists()  # the provider was not asked either


def test_an_earning_shows_when_its_hold_ends_and_why(alice_api, seller_api, api, settings):
    settings.EARNING_HOLD_DAYS = 7
    task_id = in_review(alice_api, seller_api, api)["task"]["id"]
    alice_api.post(f"/api/v1/tasks/{task_id}/delivery/approve")
    earning = Earning.objects.get(source=f"task:{task_id}")

    row = seller_api.get("/api/v1/payouts/earnings").json()["items"][0]

    assert (row["gross"], row["fee"], row["net"], row["amount"]) == ("150.00", "15.00", "135.00", "135.00")
    assert parse_datetime(row["available_at"]) == earning.available_after
    assert (row["status"], row["hold_reason"]) == ("pending", "holding_period")


def test_the_payout_account_takes_a_country(seller_api, seller):
    response = seller_api.post("/api/v1/payouts/account", {"country": "de"}, format="json")

    assert response.status_code == 200, response.content
    account = PayoutAccount.objects.get(owner=seller)
    assert LocalConnectObject.objects.get(id=account.provider_account_id).data["country"] == "DE"


@pytest.mark.parametrize(
    ("country", "type_"), [("XX", "value_error"), ("DEU", "string_too_long"), ("", "string_too_short")]
)
def test_a_payout_account_country_that_is_not_iso_3166_is_422(seller_api, seller, country, type_):
    response = seller_api.post("/api/v1/payouts/account", {"country": country}, format="json")

    assert response.status_code == 422, response.content
    assert [(e["loc"], e["type"]) for e in response.json()["detail"]] == [(["body", "country"], type_)]
    assert not PayoutAccount.objects.filter(owner=seller).exists()
