"""Card chargebacks (`charge.dispute.*`, Stripe's shapes): an unpaid earning is frozen, a paid-out one
debited from the owner's balance and paid back from later earnings; `won`, `warning_closed` and
`prevented` are not lost; the money a dispute takes from the platform's balance and gives back is booked
as the provider moved it (docs/payouts.md#chargebacks)."""

from __future__ import annotations

from decimal import Decimal
from types import SimpleNamespace

import pytest
from django.core.management import call_command

from payments import ledger
from payments.ledger import seller_balances
from payments.ledger_check import ledger_problems
from payments.models import Chargeback, Earning, LedgerEntry, Payout
from payments.provider_events import build_event
from payments.providers.local import LocalPaymentProvider
from payments.services.payouts import payouts_run
from tests.payments.payouts.conftest import in_review, onboard

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


@pytest.mark.parametrize("closed", ["won", "warning_closed", "prevented"])
def test_a_chargeback_closed_not_lost_gives_the_earning_back(alice_api, seller_api, seller, api, closed):
    earning = released(alice_api, seller_api, api)
    chargeback(api, "charge.dispute.created", earning, "needs_response")

    chargeback(api, "charge.dispute.closed", earning, closed)

    earning.refresh_from_db()
    assert (earning.status, earning.chargeback_state) == ("pending", "won")
    assert Chargeback.objects.values_list("status", "provider_status").get() == ("won", closed)
    assert seller_balances(seller.pk)["usd"]["pending"] == Decimal("135.000")
    assert ledger_problems() == []


def test_an_inquiry_escalated_to_a_chargeback_stays_frozen_and_its_close_decides(alice_api, seller_api, seller, api):
    earning = released(alice_api, seller_api, api)
    chargeback(api, "charge.dispute.created", earning, "warning_needs_response")
    chargeback(api, "charge.dispute.updated", earning, "needs_response")  # the bank made it a chargeback

    earning.refresh_from_db()
    assert (earning.status, earning.chargeback_state) == ("frozen", "frozen")
    assert Chargeback.objects.values_list("status", "provider_status").get() == ("open", "needs_response")
    assert seller_balances(seller.pk)["usd"]["frozen"] == Decimal("135.000")

    chargeback(api, "charge.dispute.updated", earning, "lost")  # an update to a closed status closes it
    chargeback(api, "charge.dispute.closed", earning, "lost")

    earning.refresh_from_db()
    assert (earning.status, earning.chargeback_state) == ("reversed", "lost")
    assert seller_balances(seller.pk)["usd"]["frozen"] == Decimal(0)
    assert ledger_problems() == []


def test_a_dispute_update_before_its_created_event_opens_it(alice_api, seller_api, seller, api):
    earning = released(alice_api, seller_api, api)

    chargeback(api, "charge.dispute.updated", earning, "under_review")

    assert Earning.objects.get(pk=earning.pk).chargeback_state == "frozen"
    chargeback(api, "charge.dispute.created", earning, "needs_response")  # late: nothing more
    assert seller_balances(seller.pk)["usd"]["frozen"] == Decimal("135.000")


def test_a_closed_dispute_is_not_reopened_by_a_late_created_event(alice_api, seller_api, seller, api):
    earning = released(alice_api, seller_api, api)
    chargeback(api, "charge.dispute.created", earning, "needs_response")
    chargeback(api, "charge.dispute.closed", earning, "won")

    chargeback(api, "charge.dispute.created", earning, "needs_response")  # re-sent, a new event id

    earning.refresh_from_db()
    assert (earning.status, earning.chargeback_state) == ("pending", "won")
    assert seller_balances(seller.pk)["usd"]["frozen"] == Decimal(0)
    assert ledger_problems() == []


def dispute_money() -> dict[str, Decimal]:
    return {
        account: total
        for (account, _currency), total in ledger.balances(source__startswith="dispute:").items()
        if total
    }


def test_a_disputes_withdrawal_and_reinstatement_are_booked_as_the_provider_moved_them(
    alice_api, seller_api, seller, api, settings
):
    settings.PAYMENTS_LOCAL_DISPUTE_FEE = "15.00"
    earning = released(alice_api, seller_api, api)
    provider = LocalPaymentProvider()

    dispute_id, events = provider.simulate_dispute(earning.payment_ref, "needs_response")
    assert [e.event_type for e in events] == ["charge.dispute.created", "charge.dispute.funds_withdrawn"]
    for event in (*events, events[-1]):  # the withdrawal delivered twice
        post(api, event)

    # The amount (150.00) and the dispute fee (15.00) left the platform's balance: the platform's loss
    # until the close decides who bears it (the seller's frozen net, if lost).
    assert dispute_money() == {
        "outside": Decimal("165.000"),
        "platform:cash": Decimal("-165.000"),
        "platform:losses": Decimal("165.000"),
        "platform:disputed": Decimal("-165.000"),
    }
    withdrawn = LedgerEntry.objects.get(kind="dispute_withdrawn")
    assert (withdrawn.provider_ref, withdrawn.source) == (dispute_id, f"dispute:{dispute_id}")

    _, events = provider.simulate_dispute(earning.payment_ref, "won")
    assert [e.event_type for e in events] == ["charge.dispute.funds_reinstated", "charge.dispute.closed"]
    for event in events:
        post(api, event)

    assert dispute_money() == {  # the amount came back; the fee is kept
        "outside": Decimal("15.000"),
        "platform:cash": Decimal("-15.000"),
        "platform:losses": Decimal("15.000"),
        "platform:disputed": Decimal("-15.000"),
    }
    earning.refresh_from_db()
    assert (earning.status, earning.chargeback_state) == ("pending", "won")
    assert LedgerEntry.objects.filter(kind__startswith="dispute_").count() == 2
    assert ledger_problems() == []


def test_a_lost_dispute_of_a_paid_out_earning_is_the_sellers_debt_and_the_platforms_fee(
    alice_api, seller_api, seller, api, settings
):
    settings.PAYMENTS_LOCAL_DISPUTE_FEE = "15.00"
    onboard(seller)
    earning = released(alice_api, seller_api, api)
    payouts_run()
    provider = LocalPaymentProvider()

    for status in ("needs_response", "lost"):
        _, events = provider.simulate_dispute(earning.payment_ref, status)
        for event in events:
            post(api, event)

    assert dispute_money()["platform:cash"] == Decimal("-165.000")  # the money that left, once
    # The seller's net (135.00) is theirs to pay back; the platform bears its fee share and the dispute fee.
    assert seller_balances(seller.pk)["usd"]["available"] == Decimal("-135.000")
    assert ledger.balances(account=f"seller:{seller.pk}:chargebacks") == {
        (f"seller:{seller.pk}:chargebacks", "usd"): Decimal("-135.000")
    }
    assert ledger_problems() == []


def post(api, event, answers=("processed", "duplicate")) -> None:
    response = api.post(
        "/api/v1/webhooks/payments",
        data=event.body,
        content_type="application/json",
        HTTP_PAYMENTS_SIGNATURE=event.headers["Payments-Signature"],
    )
    assert response.status_code == 200 and response.json()["status"] in answers, response.content


def test_a_withdrawal_delivered_after_the_close_is_booked_once_by_whichever_event_comes_first(
    alice_api, seller_api, seller, api, settings
):
    settings.PAYMENTS_LOCAL_DISPUTE_FEE = "15.00"
    earning = released(alice_api, seller_api, api)
    provider = LocalPaymentProvider()
    _, (created, withdrawn) = provider.simulate_dispute(earning.payment_ref, "needs_response")
    _, (closed,) = provider.simulate_dispute(earning.payment_ref, "lost")

    post(api, created)
    post(api, closed)  # the close, carrying the withdrawal, overtakes it
    post(api, withdrawn, answers=("processed", "ignored"))  # older than the close: the intake skips it

    assert dispute_money()["platform:cash"] == Decimal("-165.000")
    assert LedgerEntry.objects.filter(kind="dispute_withdrawn").count() == 1
    earning.refresh_from_db()
    assert (earning.status, earning.chargeback_state) == ("reversed", "lost")
    assert ledger_problems() == []
