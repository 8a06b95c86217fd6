"""`charge.refunded`: a refund made in the provider's dashboard is booked once, in any order with our own
(docs/decisions.md#refunds-made-at-the-provider), driven through the signed inbound endpoint."""

from __future__ import annotations

from decimal import Decimal

import pytest

from payments.ledger_check import ledger_problems
from payments.models import Earning, EarningStatus, LedgerEntry, PaymentStatus
from payments.money import to_minor
from payments.provider_events import build_event
from payments.providers.local import LocalPaymentProvider
from tasks_market.models import TaskStatus
from tasks_market.services.disputes import payment_refund_released
from tests.payments.payouts.conftest import in_review, paid_task, payment_of, task_of

pytestmark = pytest.mark.django_db


def charge_refunded(api, task_id, refunded: str, *, currency: str | None = None):
    """The provider's `charge.refunded` for the task's payment: `refunded` is its running total."""
    payment = payment_of(task_id)
    currency = currency or payment.currency
    obj = {
        "id": f"ch_{payment.pk.hex[:20]}",
        "object": "charge",
        "payment_intent": payment.provider_payment_id,
        "amount": to_minor(payment.amount, payment.currency),
        "amount_refunded": to_minor(Decimal(refunded), payment.currency),
        "currency": currency,
        "refunded": Decimal(refunded) == payment.amount,
    }
    event = build_event("charge.refunded", obj)
    return api.post(
        "/api/v1/webhooks/payments",
        data=event.body,
        content_type="application/json",
        HTTP_PAYMENTS_SIGNATURE=event.headers["Payments-Signature"],
    )


def refunds_booked(task_id) -> Decimal:
    return sum(
        (
            e.lines.get(account="poster:refunds").amount
            for e in LedgerEntry.objects.filter(source=f"task:{task_id}", kind="refunded")
        ),
        Decimal(0),
    )


def test_a_dashboard_refund_of_a_paid_task_refunds_and_cancels_it_once(alice_api, seller_api, api):
    task_id = paid_task(alice_api, seller_api, api)["task"]["id"]
    LocalPaymentProvider().refund_payment(payment_of(task_id).provider_payment_id)  # in the dashboard

    first = charge_refunded(api, task_id, "150.00")
    again = charge_refunded(api, task_id, "150.00")  # another event with the same total

    assert first.json()["status"] == again.json()["status"] == "processed", (first.content, again.content)
    payment = payment_of(task_id)
    assert (payment.status, payment.refunded_amount) == (PaymentStatus.REFUNDED, Decimal("150.00"))
    assert task_of(task_id).status == TaskStatus.CANCELLED
    assert refunds_booked(task_id) == Decimal("-150.00")
    assert ledger_problems() == []


def test_a_partial_dashboard_refund_is_left_out_of_the_release(alice_api, seller_api, api):
    task_id = in_review(alice_api, seller_api, api)["task"]["id"]

    assert charge_refunded(api, task_id, "30.00").json()["status"] == "processed"
    assert alice_api.post(f"/api/v1/tasks/{task_id}/delivery/approve").status_code == 200

    earning = Earning.objects.get(source=f"task:{task_id}")
    assert earning.gross == Decimal("120.00")
    assert refunds_booked(task_id) == Decimal("-30.00")
    assert ledger_problems() == []


@pytest.mark.parametrize("order", ["event first", "staff first"])
def test_a_refund_after_release_reverses_the_seller_once_in_either_order(alice_api, seller_api, api, order):
    task_id = in_review(alice_api, seller_api, api)["task"]["id"]
    assert alice_api.post(f"/api/v1/tasks/{task_id}/delivery/approve").status_code == 200

    if order == "event first":  # the dashboard's refund, then staff refund it from the admin too
        assert charge_refunded(api, task_id, "150.00").json()["status"] == "processed"
        payment_refund_released(task_id=task_id)
    else:  # our own refund after release, then the provider's event about it
        payment_refund_released(task_id=task_id)
        assert charge_refunded(api, task_id, "150.00").json()["status"] == "processed"

    earning = Earning.objects.get(source=f"task:{task_id}")
    assert earning.status == EarningStatus.REVERSED and earning.reversed_amount == earning.amount
    payment = payment_of(task_id)
    assert (payment.status, payment.refunded_amount) == (PaymentStatus.REFUNDED, Decimal("150.00"))
    assert LedgerEntry.objects.filter(source=f"task:{task_id}", kind="reversed").count() == 1
    assert refunds_booked(task_id) == Decimal("-150.00")
    assert ledger_problems() == []


def test_a_refund_in_another_currency_is_rejected(alice_api, seller_api, api):
    task_id = paid_task(alice_api, seller_api, api)["task"]["id"]

    response = charge_refunded(api, task_id, "150.00", currency="eur")

    assert response.json()["status"] == "rejected", response.content
    assert payment_of(task_id).status == PaymentStatus.SUCCEEDED
