"""Card disputes meeting refunds after release and payouts (docs/payouts.md#chargebacks,
docs/payouts.md#refunds-after-release), the provider's events posted signed through the real inbound
endpoint. Whatever the order, the seller is charged once for a refunded or charged-back task, never paid
for it, and a debt from a paid-out earning is taken back in money (the next payout's transfer is net of it).

| sequence | the seller ends with |
| --- | --- |
| inquiry, refund after release, closed warning_closed / won / prevented | nothing paid, nothing owed |
| refund after release (paid out or not), chargeback opened and lost | the refund's debt only, once |
| chargeback on a paid-out earning, refund after release, closed won / lost | one debt, never credited back |
| chargeback lost after payout, two more earnings, the payout run | the next transfer is one earning, not two |
| a payout sent back, then a chargeback debits an earlier earning | the waiting money reversed at once |
"""

from __future__ import annotations

from decimal import Decimal

import pytest

from payments import ledger
from payments.ledger import seller_balances
from payments.ledger_check import ledger_problems
from payments.models import Earning, LocalConnectObject, Payout
from payments.provider_events import SignedEvent, build_event
from payments.providers.local import LocalPaymentProvider
from payments.services.payouts import payouts_run
from tasks_market.services.disputes import payment_refund_released
from tests.payments.payouts.conftest import in_review, onboard

pytestmark = pytest.mark.django_db

ZERO = Decimal(0)
NOTHING = {"pending": ZERO, "available": ZERO, "paid_out": ZERO, "frozen": ZERO}


def released(alice_api, seller_api, api) -> Earning:
    task_id = in_review(alice_api, seller_api, api)["task"]["id"]
    assert alice_api.post(f"/api/v1/tasks/{task_id}/delivery/approve").status_code == 200
    return Earning.objects.get(source=f"task:{task_id}")


def task_id_of(earning: Earning) -> str:
    return earning.source.split(":", 1)[1]


def post(api, event: SignedEvent) -> None:
    response = api.post(
        "/api/v1/webhooks/payments",
        data=event.body,
        content_type="application/json",
        HTTP_PAYMENTS_SIGNATURE=event.headers["Payments-Signature"],
    )
    assert response.status_code == 200 and response.json()["status"] == "processed", response.content


def dispute(event_type: str, earning: Earning, status: str, dispute_id: str = "du_seq") -> SignedEvent:
    """A `charge.dispute.*` event in Stripe's shape (no money moved: an inquiry, or its close)."""
    obj = {
        "id": dispute_id,
        "object": "dispute",
        "charge": "ch_seq",
        "payment_intent": earning.payment_ref,
        "amount": 15000,
        "currency": "usd",
        "reason": "fraudulent",
        "status": status,
        "balance_transactions": [],
    }
    return build_event(event_type, obj)


def provider_dispute(api, earning: Earning, status: str) -> str:
    """The local provider opens or moves the payment's dispute (its balance moves); its events are posted."""
    dispute_id, events = LocalPaymentProvider().simulate_dispute(earning.payment_ref, status)
    for event in events:
        post(api, event)
    return dispute_id


@pytest.mark.parametrize("closed", ["warning_closed", "won", "prevented"])
def test_an_inquiry_refunded_after_release_then_closed_not_lost_pays_the_seller_nothing(
    alice_api, seller_api, seller, api, closed
):
    onboard(seller)
    earning = released(alice_api, seller_api, api)
    post(api, dispute("charge.dispute.created", earning, "warning_needs_response"))
    assert Earning.objects.get(pk=earning.pk).status == "frozen"

    payment_refund_released(task_id=task_id_of(earning))  # staff refund the poster meanwhile
    post(api, dispute("charge.dispute.closed", earning, closed))
    payouts_run()

    earning.refresh_from_db()
    assert (earning.status, earning.reversed_amount, earning.chargeback_state) == ("reversed", Decimal("135"), "won")
    assert not Payout.objects.exists()
    assert not LocalConnectObject.objects.filter(kind__in=("transfer", "payout")).exists()  # nothing moved to them
    assert seller_balances(seller.pk)["usd"] == NOTHING
    assert ledger_problems() == []


@pytest.mark.parametrize("paid_out", [True, False], ids=["paid-out", "not-paid-out"])
def test_a_chargeback_on_a_refunded_earning_does_not_charge_the_seller_again(
    alice_api, seller_api, seller, api, paid_out
):
    if paid_out:
        onboard(seller)
    earning = released(alice_api, seller_api, api)
    payouts_run()
    assert (Earning.objects.get(pk=earning.pk).status == "paid_out") == paid_out
    payment_refund_released(task_id=task_id_of(earning))
    owed = Decimal("-135") if paid_out else ZERO  # a paid-out earning's refund is a debt, once

    post(api, dispute("charge.dispute.created", earning, "needs_response"))
    assert seller_balances(seller.pk)["usd"]["available"] == owed
    post(api, dispute("charge.dispute.closed", earning, "lost"))

    earning.refresh_from_db()
    assert (earning.reversed_amount, earning.chargeback_id) == (Decimal("135"), "du_seq")
    assert seller_balances(seller.pk)["usd"] == {**NOTHING, "available": owed, "paid_out": -owed}
    assert ledger_problems() == []


@pytest.mark.parametrize("closed", ["won", "lost"])
def test_a_refund_after_a_chargeback_debited_the_seller_takes_the_chargeback_over(
    alice_api, seller_api, seller, api, closed
):
    onboard(seller)
    earning = released(alice_api, seller_api, api)
    payouts_run()
    post(api, dispute("charge.dispute.created", earning, "needs_response"))
    assert seller_balances(seller.pk)["usd"]["available"] == Decimal("-135")

    payment_refund_released(task_id=task_id_of(earning))
    assert seller_balances(seller.pk)["usd"]["available"] == Decimal("-135")  # not -270
    post(api, dispute("charge.dispute.closed", earning, closed))

    earning.refresh_from_db()
    assert (earning.reversed_amount, earning.chargeback_state) == (Decimal("135"), closed)
    assert seller_balances(seller.pk)["usd"]["available"] == Decimal("-135")  # a won close gives nothing back
    payouts_run()
    assert Payout.objects.count() == 1
    assert ledger_problems() == []


def test_a_lost_chargeback_after_payout_is_taken_from_the_next_transfer(alice_api, seller_api, seller, api):
    onboard(seller)
    first = released(alice_api, seller_api, api)
    payouts_run()
    assert Earning.objects.get(pk=first.pk).status == "paid_out"

    provider_dispute(api, first, "needs_response")  # created, funds_withdrawn
    provider_dispute(api, first, "lost")
    assert seller_balances(seller.pk)["usd"]["available"] == Decimal("-135")

    released(alice_api, seller_api, api)
    released(alice_api, seller_api, api)
    payouts_run()

    transfers = LocalConnectObject.objects.filter(kind="transfer").order_by("created_at")
    payouts = LocalConnectObject.objects.filter(kind="payout").order_by("created_at")
    # Three earnings of 135.00, one charged back: 270.00 reached the seller's account, not 405.00.
    assert [t.amount_minor for t in transfers] == [13500, 13500]
    assert [p.amount_minor for p in payouts] == [13500, 13500]
    assert seller_balances(seller.pk)["usd"]["available"] == ZERO
    assert ledger_problems() == []


def test_a_chargeback_debt_is_recovered_at_once_from_money_waiting_in_the_connected_account(
    alice_api, seller_api, seller, api, django_capture_on_commit_callbacks
):
    onboard(seller)
    first = released(alice_api, seller_api, api)
    payouts_run()
    released(alice_api, seller_api, api)
    payouts_run()
    second_payout = Payout.objects.order_by("created_at").last()
    _, failed = LocalPaymentProvider().simulate_payout_failure(second_payout.provider_payout_id)
    post(api, failed)  # the bank sent the second payout back: 135.00 waits in the connected account, owed
    assert ledger.money_balance(ledger.connected(seller.pk), "usd") == Decimal("135")

    with django_capture_on_commit_callbacks(execute=True):
        post(api, dispute("charge.dispute.created", first, "needs_response"))  # the first one is debited

    # Owed 135.00 - 135.00 = 0: what waits in the connected account is taken back to the platform at once.
    reversal = LocalConnectObject.objects.get(kind="reversal")
    assert reversal.amount_minor == 13500
    assert ledger.money_balance(ledger.connected(seller.pk), "usd") == ZERO
    assert seller_balances(seller.pk)["usd"]["available"] == ZERO
    payouts_run()
    assert Payout.objects.count() == 2 and LocalConnectObject.objects.filter(kind="transfer").count() == 2
    assert ledger_problems() == []
