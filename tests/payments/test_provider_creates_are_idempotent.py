"""A provider create retried with the same idempotency key makes one provider object (local and Stripe)."""

from __future__ import annotations

import hashlib
import threading
from decimal import Decimal

import httpx
import pytest
from django.db import connection

from core.http.errors import ProviderError, ProviderUnavailable
from payments.models import LocalPayment, LocalSubscription
from payments.providers.local import LocalPaymentProvider
from payments.providers.stripe import StripePaymentProvider

local = LocalPaymentProvider()


def _create(key: str, amount: str = "49.00"):
    return local.create_payment(amount=Decimal(amount), currency="usd", metadata={"bid_id": "b1"}, idempotency_key=key)


@pytest.mark.django_db
def test_a_retried_local_create_with_the_same_key_returns_the_same_payment():
    first = _create("bid-select:b1:0")
    retried = _create("bid-select:b1:0")
    other = _create("bid-select:b1:1")

    assert retried == first
    assert other.id != first.id
    assert LocalPayment.objects.filter(idempotency_key="bid-select:b1:0").count() == 1
    assert LocalPayment.objects.count() == 2


@pytest.mark.django_db
def test_a_key_reused_with_other_parameters_is_refused_like_stripe_does():
    _create("bid-select:b1:0", amount="49.00")

    with pytest.raises(ProviderError, match="different parameters"):
        _create("bid-select:b1:0", amount="50.00")
    assert LocalPayment.objects.count() == 1


@pytest.mark.django_db
def test_a_retried_local_subscription_create_returns_the_same_subscription():
    def create(plan="growth"):
        return local.create_subscription(
            customer_email="a@example.com", plan=plan, metadata={"team_id": "t1"}, idempotency_key="team-hire:t1"
        )

    first, retried = create(), create()

    assert retried == first
    assert LocalSubscription.objects.count() == 1
    with pytest.raises(ProviderError):
        create(plan="scale")


@pytest.mark.django_db(transaction=True)
def test_concurrent_local_creates_with_one_key_make_one_row():
    barrier = threading.Barrier(8)
    ids: list[str] = []

    def create():
        try:
            barrier.wait()
            ids.append(_create("bid-select:concurrent:0").id)
        finally:
            connection.close()

    threads = [threading.Thread(target=create) for _ in range(8)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()

    assert len(ids) == 8
    assert len(set(ids)) == 1
    assert LocalPayment.objects.count() == 1


def test_the_stripe_adapter_sends_the_callers_key_and_the_same_one_on_a_retry_after_a_timeout():
    seen: list[str] = []

    def stripe(request: httpx.Request) -> httpx.Response:
        seen.append(request.headers["Idempotency-Key"])
        if len(seen) == 1:
            raise httpx.ReadTimeout("Stripe took too long", request=request)
        session = {"id": "cs_1", "object": "checkout.session", "amount_total": 4900, "currency": "usd"}
        return httpx.Response(200, json={**session, "status": "open", "url": "https://checkout.stripe.test/cs_1"})

    provider = StripePaymentProvider(api_key="sk_test", transport=httpx.MockTransport(stripe))

    def create():
        return provider.create_payment(
            amount=Decimal("49.00"), currency="usd", metadata={}, idempotency_key="bid-select:b1:0"
        )

    with pytest.raises(ProviderUnavailable):
        create()
    assert create().id == "cs_1"
    assert seen == ["bid-select:b1:0", "bid-select:b1:0"]


def test_the_stripe_customer_and_subscription_keys_derive_from_the_operation():
    seen: list[tuple[str, str | None]] = []

    def stripe(request: httpx.Request) -> httpx.Response:
        seen.append((request.url.path, request.headers.get("Idempotency-Key")))
        if request.method == "GET":
            return httpx.Response(200, json={"object": "list", "data": []})
        if request.url.path == "/v1/customers":
            return httpx.Response(200, json={"id": "cus_1"})
        session = {"id": "cs_2", "object": "checkout.session", "expires_at": 1_900_000_000, "url": "https://x.test"}
        return httpx.Response(200, json=session)

    provider = StripePaymentProvider(
        api_key="sk_test", price_ids={"growth": "price_g"}, transport=httpx.MockTransport(stripe)
    )
    for _ in range(2):
        provider.create_subscription(
            customer_email="a@example.com", plan="growth", metadata={}, idempotency_key="team-hire:t1"
        )

    assert (
        seen
        == [
            ("/v1/customers", None),
            ("/v1/customers", "customer:" + hashlib.sha256(b"a@example.com").hexdigest()[:40]),
            ("/v1/checkout/sessions", "team-hire:t1"),
        ]
        * 2
    )
