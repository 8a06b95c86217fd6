"""The local payment provider: real state in our database, Stripe-like ids and signed events."""

from __future__ import annotations

import re
import uuid
from datetime import UTC, timedelta
from decimal import Decimal

import pytest
from django.utils import timezone

from core.http.errors import ProviderError, ProviderUnavailable
from payments import signing
from payments.models import LocalPayment
from payments.money import from_minor, to_minor
from payments.provider_events import _is_loopback, build_event
from payments.providers import get_payment_provider
from payments.providers.local import LocalPaymentProvider
from payments.providers.stripe import StripePaymentProvider

pytestmark = pytest.mark.django_db

provider = LocalPaymentProvider()


def _payment(amount="49.00", currency="usd", key=None):
    return provider.create_payment(
        amount=Decimal(amount),
        currency=currency,
        metadata={"task_id": "t1", "bid_id": 7},
        idempotency_key=key or f"test:{uuid.uuid4()}",
        description="Logo",
    )


def test_the_default_provider_is_local(settings):
    settings.PAYMENTS_PROVIDER = "local"
    assert get_payment_provider().name == "local"


def test_stripe_is_chosen_by_setting_and_needs_a_key(settings):
    settings.PAYMENTS_PROVIDER = "stripe"
    settings.STRIPE_API_KEY = ""
    with pytest.raises(ProviderUnavailable):
        get_payment_provider()

    settings.STRIPE_API_KEY = "sk_test_123"
    assert isinstance(get_payment_provider(), StripePaymentProvider)


def test_a_payment_is_created_with_realistic_ids_and_stored():
    payment = _payment()

    assert re.fullmatch(r"pi_[A-Za-z0-9]{24}", payment.id)
    assert payment.client_secret.startswith(f"{payment.id}_secret_")
    assert (payment.amount, payment.currency, payment.status) == (Decimal("49.00"), "usd", "requires_payment")
    assert payment.metadata == {"task_id": "t1", "bid_id": "7"}
    row = LocalPayment.objects.get(id=payment.id)
    assert (row.amount_minor, row.description) == (4900, "Logo")
    assert provider.get_payment(payment.id) == payment


def test_the_lifecycle_settle_release_refund():
    payment = _payment()

    settled, event = provider.simulate_payment(payment.id, "succeeded")
    released = provider.release_payment(payment.id)
    refunded = provider.refund_payment(payment.id)

    assert (settled.status, released.status, refunded.status) == ("succeeded", "released", "refunded")
    assert provider.refund_payment(payment.id).status == "refunded"  # asking again answers the same
    assert event.event_type == "payment_intent.succeeded"


def test_a_payment_can_be_cancelled_only_before_it_is_paid():
    open_payment = _payment()
    paid = _payment()
    provider.simulate_payment(paid.id, "succeeded")

    assert provider.cancel_payment(open_payment.id).status == "cancelled"
    assert provider.cancel_payment(open_payment.id).status == "cancelled"
    with pytest.raises(ProviderError, match="cannot become cancelled"):
        provider.cancel_payment(paid.id)
    with pytest.raises(ProviderError):
        provider.release_payment(open_payment.id)
    with pytest.raises(ProviderError):
        provider.simulate_payment(open_payment.id, "succeeded")


def test_a_refused_payment_is_failed_and_its_event_says_why():
    payment = _payment()

    failed, event = provider.simulate_payment(payment.id, "failed")

    assert failed.status == "failed"
    obj = event.payload["data"]["object"]
    assert event.event_type == "payment_intent.payment_failed"
    assert obj["status"] == "requires_payment_method"
    assert obj["last_payment_error"]["code"] == "card_declined"
    with pytest.raises(ProviderError):
        provider.refund_payment(payment.id)


def test_the_event_is_signed_with_the_first_secret_and_shaped_like_the_providers(settings):
    settings.PAYMENTS_WEBHOOK_SECRET = ["whsec_first", "whsec_second"]
    payment = _payment()

    _, event = provider.simulate_payment(payment.id, "succeeded")

    assert re.fullmatch(r"evt_[A-Za-z0-9]{24}", event.event_id)
    assert event.headers["Content-Type"] == "application/json"
    assert signing.verify(event.body, event.headers["Payments-Signature"], ["whsec_first"])
    assert not signing.verify(event.body, event.headers["Payments-Signature"], ["whsec_second"])
    payload = event.payload
    assert (payload["id"], payload["type"], payload["object"]) == (event.event_id, "payment_intent.succeeded", "event")
    assert abs(payload["created"] - timezone.now().timestamp()) < 5
    obj = payload["data"]["object"]
    assert obj["id"] == payment.id
    assert (obj["amount"], obj["currency"], obj["status"]) == (4900, "usd", "succeeded")
    assert obj["metadata"] == {"task_id": "t1", "bid_id": "7"}


def test_no_secret_means_no_event(settings):
    settings.PAYMENTS_WEBHOOK_SECRET = []
    with pytest.raises(ProviderUnavailable):
        build_event("payment_intent.succeeded", {"id": "pi_x"})


def test_unknown_ids_are_provider_errors():
    with pytest.raises(ProviderError, match="No such payment"):
        provider.get_payment("pi_missing")
    with pytest.raises(ProviderError, match="No such subscription"):
        provider.get_subscription("sub_missing")


@pytest.mark.parametrize(
    ("amount", "currency", "minor"),
    [("49.00", "usd", 4900), ("0.5", "EUR", 50), ("500", "jpy", 500), ("1.234", "kwd", 1234)],
)
def test_amounts_convert_per_currency(amount, currency, minor):
    assert to_minor(Decimal(amount), currency) == minor
    assert from_minor(minor, currency) == Decimal(amount)


@pytest.mark.parametrize(("amount", "currency"), [("49.001", "usd"), ("1.5", "jpy"), ("0", "usd"), ("-5", "usd")])
def test_amounts_a_currency_cannot_hold_are_refused(amount, currency):
    with pytest.raises(ProviderError):
        _payment(amount, currency)


def test_a_currency_must_be_iso():
    with pytest.raises(ProviderError):
        _payment("10.00", "dollars")


def test_subscriptions_run_in_30_day_periods_and_can_be_set_to_cancel():
    subscription = provider.create_subscription(
        customer_email="a@example.com", plan="growth", metadata={"team_id": 1}, idempotency_key="test:sub-1"
    )

    assert re.fullmatch(r"sub_[A-Za-z0-9]{24}", subscription.id)
    assert (subscription.status, subscription.cancel_at_period_end) == ("active", False)
    assert subscription.current_period_end.tzinfo == UTC
    assert abs(subscription.current_period_end - (timezone.now() + timedelta(days=30))) < timedelta(minutes=1)
    assert subscription.metadata == {"team_id": "1"}

    assert provider.set_cancel_at_period_end(subscription.id, True).cancel_at_period_end is True
    assert provider.get_subscription(subscription.id).cancel_at_period_end is True
    assert provider.set_cancel_at_period_end(subscription.id, False).cancel_at_period_end is False


def test_subscription_billing_events():
    subscription = provider.create_subscription(
        customer_email="a@example.com", plan="growth", metadata={}, idempotency_key="test:sub-2"
    )

    past_due, failed = provider.simulate_subscription(subscription.id, "payment_failed")
    active, paid = provider.simulate_subscription(subscription.id, "paid")
    _, updated = provider.simulate_subscription(subscription.id, "updated")
    ended, deleted = provider.simulate_subscription(subscription.id, "deleted")

    assert (past_due.status, active.status, ended.status) == ("past_due", "active", "canceled")
    assert (failed.event_type, paid.event_type) == ("invoice.payment_failed", "invoice.paid")
    assert failed.payload["data"]["object"]["subscription"] == subscription.id
    assert updated.event_type == "customer.subscription.updated"
    assert deleted.event_type == "customer.subscription.deleted"
    obj = deleted.payload["data"]["object"]
    assert (obj["id"], obj["status"], obj["cancel_at_period_end"]) == (subscription.id, "canceled", False)
    assert obj["current_period_end"] == int(subscription.current_period_end.timestamp())
    with pytest.raises(ProviderError):
        provider.set_cancel_at_period_end(subscription.id, True)


@pytest.mark.parametrize(
    ("url", "loopback"),
    [
        ("https://127.0.0.1:8443/api/v1/webhooks/payments", True),
        ("https://localhost/x", True),
        ("https://[::1]/x", True),
        ("https://10.0.0.5/x", False),
        ("https://api.example.com/x", False),
    ],
)
def test_certificate_checks_are_skipped_for_loopback_only(url, loopback):
    assert _is_loopback(url) is loopback
