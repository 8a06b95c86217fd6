"""A refund after release reverses the seller's transfer and earning (docs/payouts.md#refunds-after-release)."""

from __future__ import annotations

from decimal import Decimal

import pytest

from payments.ledger import seller_balances
from payments.ledger_check import ledger_problems
from payments.models import Earning, LedgerEntry, LocalConnectObject, LocalPayment, Payout
from payments.services.earnings import earning_transfer
from payments.services.payouts import payouts_run
from tasks_market.models import PaymentStatus
from tasks_market.services.disputes import payment_refund_released
from tests.payouts.conftest import in_review, ledger_rows, onboard, payment_of

pytestmark = pytest.mark.django_db


def released(alice_api, seller_api, api) -> str:
    task_id = in_review(alice_api, seller_api, api)["task"]["id"]
    assert alice_api.post(f"/api/v1/tasks/{task_id}/delivery/approve").status_code == 200
    return task_id


def test_a_refund_after_the_transfer_reverses_it(alice_api, seller_api, seller, api, admin_client):
    onboard(seller)
    task_id = released(alice_api, seller_api, api)
    earning = earning_transfer(earning_id=Earning.objects.get().pk)  # the job queued after the release commits
    assert earning.transfer_id.startswith("tr_")

    admin_client.post(
        "/admin/tasks_market/payment/",
        {"action": "refund", "_selected_action": [str(payment_of(task_id).pk)]},
        secure=True,
    )

    payment = payment_of(task_id)
    assert (payment.status, payment.refunded_amount) == (PaymentStatus.REFUNDED, Decimal("150.00"))
    assert LocalPayment.objects.get(id=payment.provider_payment_id).status == "refunded"
    reversal = LocalConnectObject.objects.get(kind="reversal")
    assert (reversal.target_id, reversal.amount_minor, reversal.idempotency_key) == (
        earning.transfer_id,
        13500,
        f"earning-reversal:{earning.pk}",
    )
    earning.refresh_from_db()
    assert (earning.status, earning.reversed_amount) == ("reversed", Decimal("135.00"))
    assert [row for row in ledger_rows(task_id) if row[0] in ("reversed", "refunded")] == [
        ("reversed", f"seller:{seller.pk}:pending", "usd", Decimal("135.000")),
        ("reversed", "platform:fees", "usd", Decimal("15.000")),
        ("reversed", "platform:held", "usd", Decimal("-150.000")),
        ("refunded", "platform:held", "usd", Decimal("150.000")),
        ("refunded", "poster:refunds", "usd", Decimal("-150.000")),
        ("refunded", "outside", "usd", Decimal("150.000")),
        ("refunded", "platform:cash", "usd", Decimal("-150.000")),
    ]
    payouts_run()
    assert not Payout.objects.exists()
    assert ledger_problems() == []

    payment_refund_released(task_id=task_id)  # again: nothing more
    assert LedgerEntry.objects.filter(kind="refunded").count() == 1
    assert LocalConnectObject.objects.filter(kind="reversal").count() == 1


def test_a_refund_after_payout_debits_the_owner(alice_api, seller_api, seller, api):
    onboard(seller)
    task_id = released(alice_api, seller_api, api)
    payouts_run()

    payment_refund_released(task_id=task_id)

    assert seller_balances(seller.pk)["usd"]["available"] == Decimal("-135.000")
    assert not LocalConnectObject.objects.filter(kind="reversal").exists()  # paid out: nothing to reverse
    assert ledger_problems() == []
