"""A refund after release takes the seller's earning back, and a transfer that reached their account but
was not paid out (docs/payouts.md#refunds-after-release)."""

from __future__ import annotations

from decimal import Decimal

import pytest

from payments import ledger
from payments.ledger import seller_balances
from payments.ledger_check import ledger_problems
from payments.models import Earning, LedgerEntry, LocalConnectObject, LocalPayment, PaymentStatus, Payout
from payments.provider_events import SignedEvent
from payments.providers.local import LocalPaymentProvider
from payments.services.payouts import payouts_run
from tasks_market.services.disputes import payment_refund_released
from tests.payments.payouts.conftest import in_review, ledger_rows, onboard, payment_of

pytestmark = pytest.mark.django_db


def post(api, event: SignedEvent) -> None:
    response = api.post(
        "/api/v1/webhooks/payments",
        data=event.body,
        content_type="application/json",
        HTTP_PAYMENTS_SIGNATURE=event.headers["Payments-Signature"],
    )
    assert response.status_code == 200 and response.json()["status"] == "processed", response.content


def released(alice_api, seller_api, api) -> str:
    task_id = in_review(alice_api, seller_api, api)["task"]["id"]
    assert alice_api.post(f"/api/v1/tasks/{task_id}/delivery/approve").status_code == 200
    return task_id


def test_a_refund_of_an_earning_whose_payout_failed_takes_its_money_back_from_the_connected_account(
    alice_api, seller_api, seller, api, admin_client, django_capture_on_commit_callbacks
):
    """Transfers are made per payout: the money of an earning whose payout failed waits in the seller's
    connected account (the next payout would use it). Refunded, the seller is owed nothing: the money
    comes back to the platform's balance right after the refund commits (a transfer reversal)."""
    onboard(seller)
    task_id = released(alice_api, seller_api, api)
    payouts_run()
    payout = Payout.objects.get()
    transfer = LocalConnectObject.objects.get(kind="transfer")
    _, failed = LocalPaymentProvider().simulate_payout_failure(payout.provider_payout_id)
    post(api, failed)  # the bank sent it back
    assert Earning.objects.get().status == "available"
    assert ledger.money_balance(ledger.connected(seller.pk), "usd") == Decimal("135")

    with django_capture_on_commit_callbacks(execute=True):
        admin_client.post(
            "/admin/payments/payment/",
            {"action": "refund", "_selected_action": [str(payment_of(task_id).pk)]},
            secure=True,
        )

    payment = payment_of(task_id)
    assert (payment.status, payment.refunded_amount) == (PaymentStatus.REFUNDED, Decimal("150.00"))
    assert LocalPayment.objects.get(id=payment.provider_payment_id).status == "refunded"
    reversal = LocalConnectObject.objects.get(kind="reversal")
    assert (reversal.target_id, reversal.amount_minor) == (transfer.id, 13500)
    assert ledger.money_balance(ledger.connected(seller.pk), "usd") == 0
    earning = Earning.objects.get()
    assert (earning.status, earning.reversed_amount) == ("reversed", Decimal("135.00"))
    assert [row for row in ledger_rows(task_id) if row[0] in ("reversed", "refunded")] == [
        ("reversed", f"seller:{seller.pk}:available", "usd", Decimal("135.000")),
        ("reversed", "platform:fees", "usd", Decimal("15.000")),
        ("reversed", "platform:held", "usd", Decimal("-150.000")),
        ("refunded", "platform:held", "usd", Decimal("150.000")),
        ("refunded", "poster:refunds", "usd", Decimal("-150.000")),
        ("refunded", "outside", "usd", Decimal("150.000")),
        ("refunded", "platform:cash", "usd", Decimal("-150.000")),
    ]
    payouts_run()
    assert Payout.objects.count() == 1  # the failed one: nothing is paid again
    assert LocalConnectObject.objects.filter(kind="reversal").count() == 1
    assert ledger_problems() == []

    payment_refund_released(task_id=task_id)  # again: nothing more
    assert LedgerEntry.objects.filter(kind="refunded").count() == 1
    assert LocalConnectObject.objects.filter(kind="reversal").count() == 1


def test_a_refund_of_an_earning_never_paid_out_moves_nothing_at_the_provider(alice_api, seller_api, seller, api):
    onboard(seller)
    task_id = released(alice_api, seller_api, api)

    payment_refund_released(task_id=task_id)
    payouts_run()

    assert not LocalConnectObject.objects.filter(kind__in=("transfer", "reversal", "payout")).exists()
    assert seller_balances(seller.pk)["usd"]["available"] == Decimal(0)
    assert ledger_problems() == []


def test_a_refund_after_payout_debits_the_owner(alice_api, seller_api, seller, api):
    onboard(seller)
    task_id = released(alice_api, seller_api, api)
    payouts_run()

    payment_refund_released(task_id=task_id)

    assert seller_balances(seller.pk)["usd"]["available"] == Decimal("-135.000")
    assert not LocalConnectObject.objects.filter(kind="reversal").exists()  # paid out: nothing to reverse
    assert ledger_problems() == []


def test_a_payment_released_before_captures_were_recorded_has_its_refund_after_release_booked(
    alice_api, seller_api, api
):
    """A payment released before `captured_at` existed has none, yet its money was captured: refunded after
    release, the refund leaves the ledger as any other's does."""
    task_id = released(alice_api, seller_api, api)
    payment = payment_of(task_id)
    type(payment).objects.filter(pk=payment.pk).update(captured_at=None)

    refunded = payment_refund_released(task_id=task_id)

    assert refunded.status == PaymentStatus.REFUNDED
    assert LedgerEntry.objects.filter(kind="refunded", source=f"task:{task_id}").count() == 1
    assert LocalPayment.objects.get(id=payment.provider_payment_id).amount_refunded_minor == 15000
    assert ledger_problems() == []
