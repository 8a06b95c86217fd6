"""`manage.py payments_simulate`: the local provider settles a payment and sends the signed event to
our own webhook, here served over real TLS with a self-signed certificate, as `make run` does."""

from __future__ import annotations

from decimal import Decimal
from io import StringIO

import pytest
from django.core.management import CommandError, call_command

from payments import registry
from payments.models import LocalPayment, Payment, PaymentStatus
from payments.providers.local import LocalPaymentProvider
from tests.payments.payouts.test_held_payments import held
from webhooks_app.models import InboundEvent


@pytest.fixture
def seen():
    events = []

    def handler(event):
        events.append(event)

    registry.register("payment_intent.succeeded", handler)
    registry.register("payment_intent.payment_failed", handler)
    yield events
    registry.unregister("payment_intent.succeeded", handler)
    registry.unregister("payment_intent.payment_failed", handler)


@pytest.mark.django_db(transaction=True)
@pytest.mark.parametrize(
    ("outcome", "event_type"), [("succeeded", "payment_intent.succeeded"), ("failed", "payment_intent.payment_failed")]
)
def test_it_settles_the_payment_and_our_webhook_applies_the_event(tls_server, settings, seen, outcome, event_type):
    settings.PAYMENTS_LOCAL_WEBHOOK_URL = f"{tls_server}/api/v1/webhooks/payments"
    payment = LocalPaymentProvider().create_payment(
        amount=Decimal("25.00"), currency="usd", metadata={"task_id": "t-9", "bid_id": "b-3"}, idempotency_key="t:1"
    )
    out = StringIO()

    call_command("payments_simulate", payment.id, outcome, stdout=out)

    assert LocalPayment.objects.get(id=payment.id).status == outcome
    stored = InboundEvent.objects.get()
    assert (stored.type, stored.status, stored.object_id) == (event_type, "processed", payment.id)
    [event] = [e for e in seen if e.id == stored.event_id]
    assert event.object["metadata"] == {"task_id": "t-9", "bid_id": "b-3"}
    assert event.object["amount"] == 2500
    text = out.getvalue()
    assert f"Payment {payment.id} (25.00 usd) is now {outcome}." in text
    assert f"Event {stored.event_id} ({event_type})." in text
    assert '→ 200 {"status":"processed"' in text


@pytest.mark.django_db
def test_an_unreachable_webhook_is_a_command_error_after_the_state_changed(settings):
    settings.PAYMENTS_LOCAL_WEBHOOK_URL = "https://127.0.0.1:9/api/v1/webhooks/payments"
    payment = LocalPaymentProvider().create_payment(
        amount=Decimal("5.00"), currency="usd", metadata={}, idempotency_key="t:2"
    )

    with pytest.raises(CommandError, match="Re-run the command"):
        call_command("payments_simulate", payment.id, "succeeded", stdout=StringIO())

    assert LocalPayment.objects.get(id=payment.id).status == "succeeded"


@pytest.mark.django_db
def test_unknown_payments_and_wrong_outcomes_are_command_errors():
    with pytest.raises(CommandError, match="No such payment"):
        call_command("payments_simulate", "pi_missing", "succeeded", "--no-send", stdout=StringIO())
    with pytest.raises(CommandError, match="A payment takes one of"):
        call_command("payments_simulate", "pi_x", "paid", "--no-send", stdout=StringIO())


@pytest.mark.django_db
def test_it_bills_a_subscription_without_sending_when_asked():
    subscription = LocalPaymentProvider().create_subscription(
        customer_email="t@example.com", plan="growth", metadata={}, idempotency_key="t:3"
    )
    out = StringIO()

    call_command("payments_simulate", subscription.id, "payment_failed", "--no-send", stdout=out)

    assert f"Subscription {subscription.id} is now past_due." in out.getvalue()
    assert '"type":"invoice.payment_failed"' in out.getvalue()


@pytest.mark.django_db
def test_it_refuses_to_run_for_stripe(settings):
    settings.PAYMENTS_PROVIDER = "stripe"
    with pytest.raises(CommandError, match="local payment provider only"):
        call_command("payments_simulate", "pi_x", "succeeded", stdout=StringIO())


@pytest.mark.django_db(transaction=True)
def test_canceled_expires_a_held_payment_and_our_webhook_records_it(tls_server, settings):
    settings.PAYMENTS_LOCAL_WEBHOOK_URL = f"{tls_server}/api/v1/webhooks/payments"
    _, _, payment = held()  # authorised, never captured
    out = StringIO()

    call_command("payments_simulate", str(payment.id), "canceled", stdout=out)

    assert LocalPayment.objects.get(id=payment.provider_payment_id).status == "cancelled"
    assert Payment.objects.get(pk=payment.pk).status == PaymentStatus.CANCELLED
    stored = InboundEvent.objects.get()
    assert (stored.type, stored.status) == ("payment_intent.canceled", "processed")
    assert f"Payment {payment.provider_payment_id} (150.00 usd) is now cancelled." in out.getvalue()


@pytest.mark.django_db
def test_a_captured_payment_cannot_be_canceled_and_the_help_says_what_canceled_does(capsys):
    payment = LocalPaymentProvider().create_payment(
        amount=Decimal("5.00"), currency="usd", metadata={}, idempotency_key="t:cancel"
    )
    LocalPayment.objects.filter(id=payment.id).update(status="released")  # captured

    with pytest.raises(CommandError, match="cannot expire"):
        call_command("payments_simulate", payment.id, "canceled", "--no-send", stdout=StringIO())

    with pytest.raises(SystemExit):
        call_command("payments_simulate", "--help")
    assert "canceled" in capsys.readouterr().out
