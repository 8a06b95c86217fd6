"""`manage.py payments_simulate` takes the payment's `id` as the API shows it (a task's payment, a credit
top-up), not only the provider's `pi_...`."""

from __future__ import annotations

import uuid
from decimal import Decimal
from io import StringIO

import pytest
from django.core.management import CommandError, call_command

from payments.models import LocalPayment, PaymentStatus
from payments.providers.local import LocalPaymentProvider
from tests.tasks_market.factories import PaymentFactory

pytestmark = pytest.mark.django_db


def test_the_api_id_of_a_task_payment_settles_its_provider_payment():
    provider_payment = LocalPaymentProvider().create_payment(
        amount=Decimal("36.00"), currency="usd", metadata={}, idempotency_key="api-id:1"
    )
    payment = PaymentFactory(provider_payment_id=provider_payment.id, status=PaymentStatus.REQUIRES_PAYMENT)
    out = StringIO()

    call_command("payments_simulate", str(payment.id), "succeeded", "--no-send", stdout=out)

    assert LocalPayment.objects.get(id=provider_payment.id).status == "succeeded"
    assert f"Payment {provider_payment.id} (36.00 usd) is now succeeded." in out.getvalue()


def test_the_api_id_of_a_credit_top_up_works_too(alice_api):
    top_up = alice_api.post("/api/v1/allmodelchat/credits/top-up", {"pack": "small"}, format="json")
    assert top_up.status_code == 201, top_up.content

    call_command("payments_simulate", top_up.json()["id"], "failed", "--no-send", stdout=StringIO())

    assert LocalPayment.objects.get().status == "failed"


def test_an_unknown_id_is_a_clear_error():
    with pytest.raises(CommandError, match="No payment has the id"):
        call_command("payments_simulate", str(uuid.uuid4()), "succeeded", "--no-send", stdout=StringIO())
