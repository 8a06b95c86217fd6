"""Payments made before capture-on-payment are held (authorised only): approval captures them, the beat
captures them before they expire, and an expiry (`payment_intent.canceled`) is recorded (docs/payouts.md)."""

from __future__ import annotations

from datetime import timedelta

import pytest
from django.utils import timezone

from payments.ledger_check import ledger_problems
from payments.models import Earning, LedgerEntry, LocalPayment, Payment, PaymentStatus
from payments.providers.local import LocalPaymentProvider
from payments.services.payments import held_payments_capture
from tasks_market.models import DeliveryStatus
from tests.conftest import client_with_token, jwt_for
from tests.payments.payouts.conftest import paid_task
from tests.tasks_market.conftest import post_payment_event
from tests.tasks_market.factories import delivering_task

pytestmark = pytest.mark.django_db


def held(delivery_status=DeliveryStatus.SUBMITTED, *, age=timedelta(0)):
    task, delivery = delivering_task(delivery_status=delivery_status)
    payment = Payment.objects.get(source=f"task:{task.pk}")
    Payment.objects.filter(pk=payment.pk).update(succeeded_at=timezone.now() - age)
    LocalPayment.objects.create(
        id=payment.provider_payment_id, amount_minor=15000, currency="usd", client_secret="s", status="succeeded"
    )
    return task, delivery, Payment.objects.get(pk=payment.pk)


def test_approving_a_held_payment_captures_it_then_releases(db):
    task, _, payment = held()
    assert payment.captured_at is None

    response = client_with_token(jwt_for(task.poster)).post(f"/api/v1/tasks/{task.id}/delivery/approve")

    assert response.status_code == 200, response.content
    payment.refresh_from_db()
    assert payment.captured_at is not None and payment.status == PaymentStatus.RELEASED
    assert LocalPayment.objects.get(id=payment.provider_payment_id).status == "released"  # captured
    assert Earning.objects.get().gross == payment.amount
    assert ledger_problems() == []


def test_the_beat_captures_held_payments_before_they_expire(db, settings):
    settings.HELD_PAYMENT_CAPTURE_AFTER_HOURS = 72
    _, _, young = held(age=timedelta(hours=1))
    _, _, old = held(age=timedelta(hours=80))

    assert held_payments_capture() == 1
    assert held_payments_capture() == 0  # safe to run twice

    old.refresh_from_db()
    young.refresh_from_db()
    assert old.captured_at is not None and old.status == PaymentStatus.SUCCEEDED
    assert LocalPayment.objects.get(id=old.provider_payment_id).status == "released"
    assert young.captured_at is None
    assert LedgerEntry.objects.filter(kind="captured", source=old.source).count() == 1
    assert ledger_problems() == []


def test_an_expired_hold_is_recorded_and_approval_answers_409(db, api, caplog):
    task, _, payment = held()
    _, event = LocalPaymentProvider().simulate_cancel(payment.provider_payment_id)

    response = api.post(
        "/api/v1/webhooks/payments",
        data=event.body,
        content_type="application/json",
        HTTP_PAYMENTS_SIGNATURE=event.headers["Payments-Signature"],
    )

    assert response.json()["status"] == "processed"
    assert Payment.objects.get(pk=payment.pk).status == PaymentStatus.CANCELLED
    assert "expired before capture" in caplog.text
    approve = client_with_token(jwt_for(task.poster)).post(f"/api/v1/tasks/{task.id}/delivery/approve")
    assert (approve.status_code, approve.json()["code"]) == (409, "invalid_state")


def test_a_cancel_event_for_captured_money_changes_nothing(alice_api, seller_api, api):
    selected = paid_task(alice_api, seller_api, api)
    payment = Payment.objects.get(pk=selected["payment"]["id"])

    response = post_payment_event(api, "payment_intent.canceled", payment.provider_payment_id)

    assert response.json()["status"] == "processed"
    assert Payment.objects.get(pk=payment.pk).status == PaymentStatus.SUCCEEDED
