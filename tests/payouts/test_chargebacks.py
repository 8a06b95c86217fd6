"""Card chargebacks (`charge.dispute.created` / `.closed`, Stripe's shapes): an unpaid earning is frozen,
a paid-out one debited from the owner's balance and paid back from later earnings (docs/payouts.md)."""

from __future__ import annotations

from decimal import Decimal
from types import SimpleNamespace

import pytest
from django.core.management import call_command

from payments.events import build_event
from payments.ledger import seller_balances
from payments.ledger_check import ledger_problems
from payments.models import Earning, Payout
from payments.services.payouts import payouts_run
from tests.payouts.conftest import in_review, onboard

pytestmark = pytest.mark.django_db


def released(alice_api, seller_api, api) -> Earning:
    task_id = in_review(alice_api, seller_api, api)["task"]["id"]
    assert alice_api.post(f"/api/v1/tasks/{task_id}/delivery/approve").status_code == 200
    return Earning.objects.get(source=f"task:{task_id}")


def chargeback(api, event_type: str, earning: Earning, status: str, dispute_id: str = "dp_1"):
    obj = {
        "id": dispute_id,
        "object": "dispute",
        "charge": "ch_1",
        "payment_intent": earning.payment_ref,
        "amount": 15000,
        "currency": "usd",
        "reason": "fraudulent",
        "status": status,
    }
    event = build_event(event_type, obj)
    response = api.post(
        "/api/v1/webhooks/payments",
        data=event.body,
        content_type="application/json",
        HTTP_PAYMENTS_SIGNATURE=event.headers["Payments-Signature"],
    )
    assert response.status_code == 200 and response.json()["status"] == "processed", response.content


def test_a_chargeback_freezes_the_unpaid_earning_and_winning_it_unfreezes(alice_api, seller_api, seller, api, caplog):
    earning = released(alice_api, seller_api, api)

    chargeback(api, "charge.dispute.created", earning, "needs_response")

    earning.refresh_from_db()
    assert (earning.status, earning.chargeback_state, earning.chargeback_id) == ("frozen", "frozen", "dp_1")
    assert seller_balances(seller.pk)["usd"]["frozen"] == Decimal("135.000")
    assert "needs attention" in caplog.text
    onboard(seller)
    payouts_run()
    assert not Payout.objects.exists()  # frozen money is not paid out
    assert ledger_problems() == []

    chargeback(api, "charge.dispute.closed", earning, "won")

    earning.refresh_from_db()
    assert (earning.status, earning.chargeback_state) == ("pending", "won")
    payouts_run()
    assert Payout.objects.get().amount == Decimal("135.000")
    assert ledger_problems() == []


def test_a_lost_chargeback_reverses_the_frozen_earning(alice_api, seller_api, seller, api):
    earning = released(alice_api, seller_api, api)
    chargeback(api, "charge.dispute.created", earning, "needs_response")

    chargeback(api, "charge.dispute.closed", earning, "lost")

    earning.refresh_from_db()
    assert (earning.status, earning.chargeback_state) == ("reversed", "lost")
    assert seller_balances(seller.pk)["usd"] == {
        "pending": Decimal(0),
        "available": Decimal(0),
        "paid_out": Decimal(0),
        "frozen": Decimal(0),
    }
    assert ledger_problems() == []


def test_a_chargeback_after_payout_debits_the_owner_and_later_earnings_pay_it_back(alice_api, seller_api, seller, api):
    onboard(seller)
    first = released(alice_api, seller_api, api)
    payouts_run()
    assert Earning.objects.get(pk=first.pk).status == "paid_out"

    chargeback(api, "charge.dispute.created", first, "needs_response")

    assert Earning.objects.get(pk=first.pk).chargeback_state == "debited"
    assert seller_balances(seller.pk)["usd"]["available"] == Decimal("-135.000")
    assert seller_api.get("/api/v1/payouts/balance").json()["items"][0]["available"] == "-135.00"

    released(alice_api, seller_api, api)  # 135.00 more: exactly pays the debt back
    payouts_run()
    assert Payout.objects.count() == 1  # nothing to pay out: the balance is 0
    released(alice_api, seller_api, api)
    payouts_run()
    assert [p.amount for p in Payout.objects.order_by("created_at")] == [Decimal("135.000"), Decimal("135.000")]
    assert ledger_problems() == []


def test_a_chargeback_twice_applies_once(alice_api, seller_api, seller, api):
    earning = released(alice_api, seller_api, api)
    chargeback(api, "charge.dispute.created", earning, "needs_response")
    chargeback(api, "charge.dispute.created", earning, "needs_response")  # a second event id, same dispute

    assert seller_balances(seller.pk)["usd"]["frozen"] == Decimal("135.000")
    assert ledger_problems() == []


def test_a_chargeback_lost_before_the_release_reverses_the_earning_it_makes(alice_api, seller_api, seller, api):
    selected = in_review(alice_api, seller_api, api)
    payment = SimpleNamespace(payment_ref=selected["payment"]["provider_payment_id"])
    chargeback(api, "charge.dispute.created", payment, "needs_response")
    chargeback(api, "charge.dispute.closed", payment, "lost")  # all before the poster approves
    onboard(seller)

    approved = alice_api.post(f"/api/v1/tasks/{selected['task']['id']}/delivery/approve")
    payouts_run()

    assert approved.status_code == 200, approved.content
    earning = Earning.objects.get(source=f"task:{selected['task']['id']}")
    assert (earning.status, earning.chargeback_state, earning.chargeback_id) == ("reversed", "lost", "dp_1")
    assert not Payout.objects.exists() and earning.transfer_id == ""  # never paid to the seller
    assert seller_balances(seller.pk)["usd"] == {
        "pending": Decimal(0),
        "available": Decimal(0),
        "paid_out": Decimal(0),
        "frozen": Decimal(0),
    }
    assert ledger_problems() == []
    call_command("ledger_check")  # exits non-zero on a broken invariant


def test_a_chargeback_won_before_the_release_leaves_the_earning_alone(alice_api, seller_api, seller, api):
    selected = in_review(alice_api, seller_api, api)
    payment = SimpleNamespace(payment_ref=selected["payment"]["provider_payment_id"])
    chargeback(api, "charge.dispute.created", payment, "needs_response")
    chargeback(api, "charge.dispute.closed", payment, "won")
    onboard(seller)

    assert alice_api.post(f"/api/v1/tasks/{selected['task']['id']}/delivery/approve").status_code == 200
    payouts_run()

    earning = Earning.objects.get(source=f"task:{selected['task']['id']}")
    assert earning.chargeback_state == "" and Payout.objects.get().amount == Decimal("135.000")
    assert ledger_problems() == []
