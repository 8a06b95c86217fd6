"""One decimal policy per currency, the fee's minimum per currency, the fee pinned at selection, and the
currencies the platform settles in (docs/decisions.md#one-decimal-policy-per-currency,
#fee-minimum-per-currency, #the-fee-is-pinned-at-selection, #settlement-currencies)."""

from __future__ import annotations

from decimal import Decimal

import pytest

from payments.fees import fee_minimum, fee_split
from payments.models import Earning, LocalPayment, Payment
from payments.money import exponent, places_problem
from tasks_market.models import Bid, DisputeResolution, TaskStatus
from tasks_market.models.market import CURRENCIES, check_amount_places
from tests.payments.payouts.conftest import in_review, payment_of, task_of
from tests.tasks_market.conftest import place_bid, post_task, register_agent, simulate_payment, task_body
from tests.tasks_market.factories import text_artefact

pytestmark = pytest.mark.django_db


@pytest.mark.parametrize("currency", CURRENCIES)
def test_validation_reads_the_providers_table_of_minor_units(currency):
    one_minor_unit = Decimal(1).scaleb(-exponent(currency))
    finer = one_minor_unit / 10

    assert check_amount_places(Decimal(100) + one_minor_unit, currency) is None
    assert check_amount_places(Decimal(100) + finer, currency) == places_problem(finer, currency) != ""


def test_a_bid_with_more_decimals_than_its_currency_has_is_422(alice_api, bob_api):
    task = post_task(alice_api, budget_currency="jpy", budget_amount="300000")
    agent = register_agent(bob_api)
    body = {"agent_id": agent["id"], "amount": 263906.1, "currency": "jpy", "proposal": "Copy.", "eta_hours": 24}

    response = bob_api.post(f"/api/v1/tasks/{task['id']}/bids", body, format="json")

    assert response.status_code == 422, response.content
    assert response.json()["detail"][0]["loc"] == ["body", "amount"]
    assert not Bid.objects.exists()


def jpy_dispute(alice_api, seller_api, api):
    """A disputed task in jpy, through the real flow (the local provider, the signed webhook)."""
    task = post_task(alice_api, budget_currency="jpy", budget_amount="3000")
    agent = register_agent(seller_api)
    bid = place_bid(seller_api, task["id"], agent["id"], amount="2000", currency="jpy")
    selection = alice_api.post(f"/api/v1/tasks/{task['id']}/bids/{bid['id']}/select").json()
    assert simulate_payment(api, selection["payment"]["provider_payment_id"]).status_code == 200
    seller_api.post(f"/api/v1/tasks/{task['id']}/delivery", {"artefacts": [text_artefact()]}, format="json")
    alice_api.post(f"/api/v1/tasks/{task['id']}/delivery/dispute", {"reason": "No."}, format="json")
    assert task_of(task["id"]).status == TaskStatus.DISPUTED
    return task["id"]


def test_a_split_of_half_a_yen_is_422_and_leaves_nothing_applying(alice_api, seller_api, staff_api, api):
    task_id = jpy_dispute(alice_api, seller_api, api)

    response = staff_api.post(
        f"/api/v1/disputes/{task_id}/resolve",
        {"outcome": "split", "refund_amount": "0.5", "note": "Half."},
        format="json",
    )

    assert response.status_code == 422, response.content
    assert response.json()["detail"][0]["loc"] == ["body", "refund_amount"]
    assert not DisputeResolution.objects.exists()
    whole = staff_api.post(
        f"/api/v1/disputes/{task_id}/resolve",
        {"outcome": "split", "refund_amount": "500", "note": "Some."},
        format="json",
    )
    assert whole.status_code == 200, whole.content
    assert LocalPayment.objects.get(id=payment_of(task_id).provider_payment_id).amount_refunded_minor == 500


@pytest.mark.parametrize(
    ("setting", "currency", "minimum"),
    [
        (Decimal("0.50"), "usd", Decimal("0.50")),  # one number: the old form, every currency
        (Decimal("0.50"), "jpy", Decimal("0.50")),
        ("usd=0.50,jpy=50", "usd", Decimal("0.50")),  # per currency, as the environment gives it
        ("usd=0.50,jpy=50", "jpy", Decimal("50")),
        ("usd=0.50,jpy=50", "eur", Decimal("0")),  # a currency not named has none
        ({"usd": "0.30", "JPY": 40}, "jpy", Decimal("40")),
    ],
)
def test_the_fee_minimum_is_per_currency(settings, setting, currency, minimum):
    settings.PLATFORM_FEE_MINIMUM = setting

    assert fee_minimum(currency) == minimum


def test_a_jpy_minimum_is_in_yen_not_in_dollars(settings):
    settings.PLATFORM_FEE_PERCENT, settings.PLATFORM_FEE_MINIMUM = Decimal(10), "usd=0.50,jpy=80"

    assert fee_split(amount=Decimal(500), currency="jpy").fee == Decimal(80)
    assert fee_split(amount=Decimal(5), currency="usd").fee == Decimal("0.50")


def test_the_fee_the_poster_saw_at_selection_is_the_one_released(settings, alice_api, seller_api, api):
    settings.PLATFORM_FEE_PERCENT, settings.PLATFORM_FEE_MINIMUM = Decimal(10), Decimal(0)
    selected = in_review(alice_api, seller_api, api)
    task_id = selected["task"]["id"]
    assert (selected["payment"]["fee"], selected["payment"]["net"]) == ("15.00", "135.00")
    settings.PLATFORM_FEE_PERCENT = Decimal(30)  # a settings change after the deal was made

    assert alice_api.post(f"/api/v1/tasks/{task_id}/delivery/approve").status_code == 200

    earning = Earning.objects.get(source=f"task:{task_id}")
    assert (earning.fee, earning.amount) == (Decimal("15.00"), Decimal("135.00"))
    payment = Payment.objects.get(source=f"task:{task_id}")
    assert (payment.fee_percent, payment.fee_minimum) == (Decimal(10), Decimal(0))


def test_tasks_and_bids_outside_the_settlement_currencies_are_422(settings, alice_api, bob_api):
    eur_task = post_task(alice_api, budget_currency="eur")
    settings.PAYMENTS_SETTLEMENT_CURRENCIES = ["usd"]
    agent = register_agent(bob_api)

    task = alice_api.post("/api/v1/tasks", task_body(budget_currency="eur"), format="json")
    bid = bob_api.post(
        f"/api/v1/tasks/{eur_task['id']}/bids",
        {"agent_id": agent["id"], "amount": "10.00", "currency": "eur", "proposal": "Copy.", "eta_hours": 24},
        format="json",
    )
    usd = alice_api.post("/api/v1/tasks", task_body(budget_currency="usd"), format="json")

    assert task.status_code == 422 and task.json()["detail"][0]["loc"] == ["body", "budget_currency"], task.content
    assert bid.status_code == 422 and bid.json()["detail"][0]["loc"] == ["body", "currency"], bid.content
    assert usd.status_code == 201
