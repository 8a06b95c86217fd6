"""The Stripe provider against httpx.MockTransport: the exact requests sent, and how answers map."""

from __future__ import annotations

from datetime import UTC, datetime
from decimal import Decimal
from urllib.parse import parse_qsl

import httpx
import pytest

from core.http.errors import ProviderError, ProviderUnavailable
from payments.providers.stripe import StripePaymentProvider

NOW = 1_900_000_000


class FakeStripe:
    """Answers (method, path) from a table and records every request."""

    def __init__(self, answers: dict[tuple[str, str], list[httpx.Response] | httpx.Response]):
        self.answers = {k: v if isinstance(v, list) else [v] for k, v in answers.items()}
        self.requests: list[httpx.Request] = []

    def __call__(self, request: httpx.Request) -> httpx.Response:
        self.requests.append(request)
        queue = self.answers[(request.method, request.url.path)]
        return queue.pop(0) if len(queue) > 1 else queue[0]

    def form(self, index: int) -> list[tuple[str, str]]:
        return parse_qsl(self.requests[index].content.decode(), keep_blank_values=True)


def provider(fake, **kwargs) -> StripePaymentProvider:
    return StripePaymentProvider(
        api_key="sk_test_abc",
        base_url="https://stripe.test",
        price_ids={"growth": "price_growth"},
        transport=httpx.MockTransport(fake),
        **kwargs,
    )


def intent(status="requires_payment_method", **extra) -> dict:
    return {
        "id": "pi_123",
        "object": "payment_intent",
        "amount": 4900,
        "currency": "usd",
        "status": status,
        "capture_method": "manual",
        "client_secret": "pi_123_secret_abc",
        "metadata": {"task_id": "t1"},
        "last_payment_error": None,
        **extra,
    }


def ok(body: dict) -> httpx.Response:
    return httpx.Response(200, json=body)


def session(**extra) -> dict:
    return {
        "id": "cs_test_123",
        "object": "checkout.session",
        "mode": "payment",
        "status": "open",
        "amount_total": 4900,
        "currency": "usd",
        "url": "https://checkout.stripe.com/c/pay/cs_test_123",
        "payment_intent": None,
        "subscription": None,
        "expires_at": NOW,
        "metadata": {"task_id": "t1", "bid_id": "b1", "payment_id": "p1"},
        **extra,
    }


def test_create_payment_opens_a_checkout_session_in_minor_units():
    fake = FakeStripe({("POST", "/v1/checkout/sessions"): ok(session())})

    payment = provider(fake).create_payment(
        amount=Decimal("49.00"),
        currency="USD",
        metadata={"task_id": "t1", "bid_id": "b1", "payment_id": "p1"},
        idempotency_key="bid-select:b1:0",
        description="Task: Logo",
        payee="Agent Copybot",
        success_url="https://app.example.com/paid",
        cancel_url="https://app.example.com/declined",
    )

    [request] = fake.requests
    assert str(request.url) == "https://stripe.test/v1/checkout/sessions"
    assert request.headers["Authorization"] == "Bearer sk_test_abc"
    assert request.headers["Content-Type"] == "application/x-www-form-urlencoded"
    assert request.headers["Idempotency-Key"] == "bid-select:b1:0"
    assert request.extensions["timeout"]["read"] == 20.0
    assert fake.form(0) == [
        ("mode", "payment"),
        ("line_items[0][quantity]", "1"),
        ("line_items[0][price_data][currency]", "usd"),
        ("line_items[0][price_data][unit_amount]", "4900"),
        ("line_items[0][price_data][product_data][name]", "Task: Logo"),
        ("line_items[0][price_data][product_data][description]", "Paid to Agent Copybot"),
        ("payment_intent_data[capture_method]", "automatic"),
        ("payment_intent_data[transfer_group]", "task:t1"),
        ("payment_intent_data[metadata][task_id]", "t1"),
        ("payment_intent_data[metadata][bid_id]", "b1"),
        ("payment_intent_data[metadata][payment_id]", "p1"),
        ("metadata[task_id]", "t1"),
        ("metadata[bid_id]", "b1"),
        ("metadata[payment_id]", "p1"),
        ("payment_intent_data[description]", "Task: Logo"),
        ("client_reference_id", "bid-select:b1:p1"),
        ("success_url", "https://app.example.com/paid"),
        ("cancel_url", "https://app.example.com/declined"),
    ]
    assert payment.id == "cs_test_123"
    assert payment.checkout_url == "https://checkout.stripe.com/c/pay/cs_test_123"
    assert (payment.amount, payment.currency, payment.status) == (Decimal("49.00"), "usd", "requires_payment")
    assert payment.client_secret == ""


def test_a_credit_top_up_is_captured_at_once_under_its_own_key():
    fake = FakeStripe({("POST", "/v1/checkout/sessions"): ok(session(amount_total=500))})
    metadata = {"kind": "credit_top_up", "top_up_id": "tu1", "user_id": "u1", "pack": "small"}

    provider(fake).create_payment(
        amount=Decimal("5.00"), currency="usd", metadata=metadata, idempotency_key="credit-top-up:tu1"
    )

    form = fake.form(0)
    assert ("payment_intent_data[capture_method]", "automatic") in form
    assert ("payment_intent_data[metadata][kind]", "credit_top_up") in form
    assert ("line_items[0][price_data][unit_amount]", "500") in form
    assert not any(key in ("success_url", "cancel_url") for key, _ in form)
    assert fake.requests[0].headers["Idempotency-Key"] == "credit-top-up:tu1"


def test_a_retried_create_is_the_same_request_under_the_same_key():
    fake = FakeStripe({("POST", "/v1/checkout/sessions"): [httpx.Response(500, json={}), ok(session())]})
    stripe = provider(fake)
    kwargs = {
        "amount": Decimal("49.00"),
        "currency": "usd",
        "metadata": {"bid_id": "b1", "payment_id": "p1"},
        "idempotency_key": "bid-select:b1:0",
    }

    with pytest.raises(ProviderError):
        stripe.create_payment(**kwargs)
    stripe.create_payment(**kwargs)

    first, second = fake.requests
    assert first.headers["Idempotency-Key"] == second.headers["Idempotency-Key"] == "bid-select:b1:0"
    assert first.content == second.content


def test_the_callers_key_is_sent_and_an_empty_one_is_refused_before_calling_stripe():
    fake = FakeStripe({("POST", "/v1/checkout/sessions"): ok(session())})
    stripe = provider(fake)

    stripe.create_payment(amount=Decimal("1.00"), currency="usd", metadata={"bid_id": "b1"}, idempotency_key="k-1")
    with pytest.raises(ValueError, match="Idempotency-Key"):
        stripe.create_payment(amount=Decimal("1.00"), currency="usd", metadata={}, idempotency_key="")

    assert [r.headers["Idempotency-Key"] for r in fake.requests] == ["k-1"]


def test_a_session_reference_is_resolved_to_its_intent():
    paid = session(status="complete", payment_intent="pi_123")
    fake = FakeStripe(
        {
            ("GET", "/v1/checkout/sessions/cs_test_123"): ok(paid),
            ("GET", "/v1/payment_intents/pi_123"): ok(intent("requires_capture")),
            ("POST", "/v1/payment_intents/pi_123/capture"): ok(intent("succeeded")),
        }
    )
    stripe = provider(fake)

    assert stripe.get_payment("cs_test_123").status == "succeeded"
    assert stripe.release_payment("cs_test_123").status == "released"
    assert [(r.method, r.url.path) for r in fake.requests][-2:] == [
        ("GET", "/v1/checkout/sessions/cs_test_123"),
        ("POST", "/v1/payment_intents/pi_123/capture"),
    ]


def test_cancelling_an_unpaid_session_expires_it():
    fake = FakeStripe(
        {
            ("GET", "/v1/checkout/sessions/cs_test_123"): ok(session()),
            ("POST", "/v1/checkout/sessions/cs_test_123/expire"): ok(session(status="expired")),
        }
    )

    payment = provider(fake).cancel_payment("cs_test_123")

    assert payment.status == "cancelled"
    assert [(r.method, r.url.path) for r in fake.requests] == [
        ("GET", "/v1/checkout/sessions/cs_test_123"),
        ("POST", "/v1/checkout/sessions/cs_test_123/expire"),
    ]


def test_releasing_an_unpaid_session_is_a_provider_error():
    fake = FakeStripe({("GET", "/v1/checkout/sessions/cs_test_123"): ok(session())})
    with pytest.raises(ProviderError, match="not been paid"):
        provider(fake).release_payment("cs_test_123")


@pytest.mark.parametrize(
    ("answer", "ours"),
    [
        (intent("requires_payment_method"), "requires_payment"),
        (intent("requires_payment_method", last_payment_error={"code": "card_declined"}), "failed"),
        (intent("requires_action"), "requires_payment"),
        (intent("processing"), "requires_payment"),
        (intent("requires_capture"), "succeeded"),
        (intent("succeeded", latest_charge={"id": "ch_1", "refunded": False}), "released"),
        (intent("succeeded", latest_charge={"id": "ch_1", "refunded": True}), "refunded"),
        (intent("succeeded", capture_method="automatic"), "succeeded"),
        (intent("canceled", cancellation_reason="abandoned"), "cancelled"),
        (intent("canceled", cancellation_reason="requested_by_customer"), "refunded"),
    ],
)
def test_get_payment_maps_stripe_statuses_to_ours(answer, ours):
    fake = FakeStripe({("GET", "/v1/payment_intents/pi_123"): ok(answer)})

    assert provider(fake).get_payment("pi_123").status == ours
    assert fake.requests[0].url.params.get_list("expand[]") == ["latest_charge"]
    assert "Idempotency-Key" not in fake.requests[0].headers


def test_cancel_and_release():
    fake = FakeStripe(
        {
            ("POST", "/v1/payment_intents/pi_123/cancel"): ok(intent("canceled", cancellation_reason="abandoned")),
            ("POST", "/v1/payment_intents/pi_123/capture"): ok(intent("succeeded")),
        }
    )
    stripe = provider(fake)

    assert stripe.cancel_payment("pi_123").status == "cancelled"
    assert stripe.release_payment("pi_123").status == "released"
    assert fake.form(0) == [("cancellation_reason", "abandoned")]
    assert fake.requests[1].url.path == "/v1/payment_intents/pi_123/capture"


def test_refunding_a_captured_payment_creates_a_refund():
    fake = FakeStripe(
        {
            ("GET", "/v1/payment_intents/pi_123"): [
                ok(intent("succeeded", latest_charge={"id": "ch_1", "refunded": False})),
                ok(intent("succeeded", latest_charge={"id": "ch_1", "refunded": True})),
            ],
            ("POST", "/v1/refunds"): ok({"id": "re_1", "object": "refund", "status": "succeeded"}),
        }
    )

    payment = provider(fake).refund_payment("pi_123")

    assert payment.status == "refunded"
    assert [(r.method, r.url.path) for r in fake.requests] == [
        ("GET", "/v1/payment_intents/pi_123"),
        ("POST", "/v1/refunds"),
        ("GET", "/v1/payment_intents/pi_123"),
    ]
    assert fake.form(1) == [("payment_intent", "pi_123"), ("metadata[operation]", "refund:pi_123")]
    assert fake.requests[1].headers["Idempotency-Key"] == "refund:pi_123"


def test_refunding_an_uncaptured_payment_cancels_the_authorisation():
    fake = FakeStripe(
        {
            ("GET", "/v1/payment_intents/pi_123"): ok(intent("requires_capture")),
            ("POST", "/v1/payment_intents/pi_123/cancel"): ok(
                intent("canceled", cancellation_reason="requested_by_customer")
            ),
        }
    )

    assert provider(fake).refund_payment("pi_123").status == "refunded"
    assert fake.form(1) == [("cancellation_reason", "requested_by_customer")]


def test_a_failed_refund_is_a_provider_error():
    fake = FakeStripe(
        {
            ("GET", "/v1/payment_intents/pi_123"): ok(intent("succeeded")),
            ("POST", "/v1/refunds"): ok({"id": "re_1", "status": "failed"}),
        }
    )
    with pytest.raises(ProviderError):
        provider(fake).refund_payment("pi_123")


def subscription(**extra) -> dict:
    return {
        "id": "sub_123",
        "object": "subscription",
        "status": "incomplete",
        "cancel_at_period_end": False,
        "metadata": {"team_id": "tm1"},
        "items": {"data": [{"id": "si_1", "current_period_end": NOW}]},
        **extra,
    }


def subscription_session(**extra) -> dict:
    return session(
        id="cs_test_sub",
        mode="subscription",
        url="https://checkout.stripe.com/c/pay/cs_test_sub",
        metadata={"team_id": "tm1", "user_id": "u1"},
        **extra,
    )


def test_create_subscription_opens_a_subscription_checkout_for_a_new_customer():
    fake = FakeStripe(
        {
            ("GET", "/v1/customers"): ok({"object": "list", "data": []}),
            ("POST", "/v1/customers"): ok({"id": "cus_new", "object": "customer"}),
            ("POST", "/v1/checkout/sessions"): ok(subscription_session()),
        }
    )

    result = provider(fake).create_subscription(
        customer_email="a@example.com",
        plan="growth",
        metadata={"team_id": "tm1", "user_id": "u1"},
        idempotency_key="team-hire:tm1",
        success_url="https://app.example.com/hired",
        cancel_url="https://app.example.com/not-hired",
    )

    assert [(r.method, r.url.path) for r in fake.requests] == [
        ("GET", "/v1/customers"),
        ("POST", "/v1/customers"),
        ("POST", "/v1/checkout/sessions"),
    ]
    assert dict(fake.requests[0].url.params) == {"email": "a@example.com", "limit": "1"}
    assert fake.form(1) == [("email", "a@example.com")]
    assert fake.requests[1].headers["Idempotency-Key"].startswith("customer:")
    assert fake.form(2) == [
        ("mode", "subscription"),
        ("customer", "cus_new"),
        ("line_items[0][price]", "price_growth"),
        ("line_items[0][quantity]", "1"),
        ("subscription_data[metadata][team_id]", "tm1"),
        ("subscription_data[metadata][user_id]", "u1"),
        ("metadata[team_id]", "tm1"),
        ("metadata[user_id]", "u1"),
        ("client_reference_id", "tm1"),
        ("success_url", "https://app.example.com/hired"),
        ("cancel_url", "https://app.example.com/not-hired"),
    ]
    assert fake.requests[2].headers["Idempotency-Key"] == "team-hire:tm1"
    assert result.id == "cs_test_sub"
    assert result.checkout_url == "https://checkout.stripe.com/c/pay/cs_test_sub"
    assert (result.status, result.cancel_at_period_end) == ("incomplete", False)
    assert result.current_period_end == datetime.fromtimestamp(NOW, tz=UTC)
    assert result.metadata == {"team_id": "tm1", "user_id": "u1"}


def test_create_subscription_reuses_an_existing_customer():
    fake = FakeStripe(
        {
            ("GET", "/v1/customers"): ok({"object": "list", "data": [{"id": "cus_old"}]}),
            ("POST", "/v1/checkout/sessions"): ok(subscription_session()),
        }
    )

    provider(fake).create_subscription(
        customer_email="a@example.com", plan="growth", metadata={}, idempotency_key="team-hire:tm2"
    )

    assert len(fake.requests) == 2
    assert ("customer", "cus_old") in fake.form(1)


def test_a_completed_subscription_checkout_is_resolved_to_its_subscription():
    fake = FakeStripe(
        {
            ("GET", "/v1/checkout/sessions/cs_test_sub"): ok(subscription_session(subscription="sub_123")),
            ("POST", "/v1/subscriptions/sub_123"): ok(subscription(status="active", cancel_at_period_end=True)),
        }
    )

    result = provider(fake).set_cancel_at_period_end("cs_test_sub", True)

    assert (result.id, result.cancel_at_period_end) == ("sub_123", True)
    assert fake.requests[-1].url.path == "/v1/subscriptions/sub_123"


def test_a_plan_without_a_price_is_unavailable_and_sends_nothing():
    fake = FakeStripe({})
    with pytest.raises(ProviderUnavailable, match="STRIPE_PRICE_IDS"):
        provider(fake).create_subscription(
            customer_email="a@example.com", plan="enterprise", metadata={}, idempotency_key="team-hire:tm3"
        )
    assert fake.requests == []


def test_set_cancel_at_period_end_and_get_subscription():
    fake = FakeStripe(
        {
            ("POST", "/v1/subscriptions/sub_123"): ok(subscription(status="active", cancel_at_period_end=True)),
            ("GET", "/v1/subscriptions/sub_123"): ok(subscription(status="incomplete_expired")),
        }
    )
    stripe = provider(fake)

    assert stripe.set_cancel_at_period_end("sub_123", True).cancel_at_period_end is True
    assert fake.form(0) == [("cancel_at_period_end", "true")]
    assert stripe.get_subscription("sub_123").status == "canceled"


@pytest.mark.parametrize(
    ("response", "error", "message"),
    [
        (
            httpx.Response(402, json={"error": {"type": "card_error", "message": "Your card was declined."}}),
            ProviderError,
            "Your card was declined.",
        ),
        (
            httpx.Response(404, json={"error": {"message": "No such payment_intent: 'pi_123'"}}),
            ProviderError,
            "No such payment_intent",
        ),
        (httpx.Response(400, text="<html>bad</html>"), ProviderError, "Bad Request"),
        (httpx.Response(429, json={"error": {"message": "Too many requests"}}), ProviderUnavailable, "rate limiting"),
        (httpx.Response(500, json={"error": {"message": "internal"}}), ProviderError, "failed to process"),
        (httpx.Response(200, text="not json"), ProviderError, "JSON"),
    ],
)
def test_answers_map_to_our_errors(response, error, message):
    fake = FakeStripe({("GET", "/v1/payment_intents/pi_123"): response})

    with pytest.raises(error, match=message):
        provider(fake).get_payment("pi_123")


@pytest.mark.parametrize(
    ("exception", "message"),
    [(httpx.ReadTimeout("slow"), "in time"), (httpx.ConnectError("refused"), "cannot be reached")],
)
def test_network_failures_are_unavailable(exception, message):
    def fail(request):
        raise exception

    with pytest.raises(ProviderUnavailable, match=message):
        provider(fail).get_payment("pi_123")


def test_an_injected_client_is_used():
    fake = FakeStripe({("GET", "/v1/payment_intents/pi_123"): ok(intent("requires_capture"))})
    client = httpx.Client(transport=httpx.MockTransport(fake))

    stripe = StripePaymentProvider(api_key="sk_test_abc", base_url="https://stripe.test", client=client)

    assert stripe.get_payment("pi_123").status == "succeeded"
    assert len(fake.requests) == 1


def test_ids_that_are_not_stripe_ids_never_reach_a_url():
    fake = FakeStripe({})
    with pytest.raises(ProviderError):
        provider(fake).cancel_payment("pi_1/../../v1/customers")
    assert fake.requests == []


def test_no_api_key_is_unavailable():
    with pytest.raises(ProviderUnavailable):
        StripePaymentProvider(api_key="")
