"""Stripe, over httpx against its documented REST API (form-encoded, `Authorization: Bearer <key>`).

Payments are PaymentIntents created with `capture_method=manual`: the customer's payment secures
the money (`requires_capture`, our `succeeded`), approval captures it (our `released`). Refunding
an intent that was never captured cancels it, which gives the authorisation back.

Status mapping (PaymentIntent → ours):
    requires_payment_method   → requires_payment, or failed when `last_payment_error` is set
    requires_confirmation, requires_action, processing → requires_payment
    requires_capture          → succeeded
    succeeded                 → released (manual capture), or refunded when its charge is refunded
    canceled                  → cancelled, or refunded when we cancelled it as a refund
Subscriptions keep Stripe's words; `incomplete_expired` → canceled and `paused` → unpaid.

Errors: a 4xx answer is `ProviderError` (502), except 429 which is `ProviderUnavailable` (503) like
a timeout or a network failure; a 5xx answer is `ProviderError` (Stripe answered and failed). No
API key, or no price for a plan, is `ProviderUnavailable`. Every call has a timeout; every create
sends a fresh `Idempotency-Key`.
"""

from __future__ import annotations

import re
import uuid
from datetime import UTC, datetime
from decimal import Decimal
from typing import Any
from urllib.parse import urlencode

import httpx
from django.conf import settings

from core.errors import ProviderError, ProviderUnavailable
from core.providers.payments.base import Payment, PaymentStatus, Subscription, SubscriptionStatus
from core.providers.payments.money import from_minor, normalise_currency, to_minor

TIMEOUT = httpx.Timeout(20.0, connect=5.0)
# Cancelling with this reason is how we refund an intent that was never captured.
REFUND_CANCELLATION_REASON = "requested_by_customer"

_PENDING = {"requires_payment_method", "requires_confirmation", "requires_action", "processing"}
_SUBSCRIPTION_STATUS = {"incomplete_expired": SubscriptionStatus.CANCELED, "paused": SubscriptionStatus.UNPAID}

Form = list[tuple[str, str]]
_ID = re.compile(r"^[A-Za-z0-9_]{1,255}$")


def _safe_id(value: str) -> str:
    """An id that goes into a URL path: Stripe ids are letters, digits and underscores only."""
    if not isinstance(value, str) or not _ID.match(value):
        raise ProviderError(f"{value!r} is not a Stripe id.")
    return value


def _metadata_form(metadata: dict[str, str]) -> Form:
    return [(f"metadata[{key}]", str(value)) for key, value in (metadata or {}).items()]


def payment_status(intent: dict[str, Any]) -> str:
    status = intent.get("status")
    if status in _PENDING:
        if status == "requires_payment_method" and intent.get("last_payment_error"):
            return PaymentStatus.FAILED
        return PaymentStatus.REQUIRES_PAYMENT
    if status == "requires_capture":
        return PaymentStatus.SUCCEEDED
    if status == "succeeded":
        charge = intent.get("latest_charge")
        if isinstance(charge, dict) and charge.get("refunded"):
            return PaymentStatus.REFUNDED
        return PaymentStatus.RELEASED if intent.get("capture_method") == "manual" else PaymentStatus.SUCCEEDED
    if status == "canceled":
        if intent.get("cancellation_reason") == REFUND_CANCELLATION_REASON:
            return PaymentStatus.REFUNDED
        return PaymentStatus.CANCELLED
    raise ProviderError(f"Stripe returned an unknown payment status {status!r}.")


def to_payment(intent: dict[str, Any]) -> Payment:
    try:
        currency = intent["currency"]
        return Payment(
            id=intent["id"],
            amount=from_minor(intent["amount"], currency),
            currency=currency,
            status=payment_status(intent),
            client_secret=intent.get("client_secret") or "",
            checkout_url="",
            metadata={str(k): str(v) for k, v in (intent.get("metadata") or {}).items()},
        )
    except (KeyError, TypeError, ValueError) as exc:
        raise ProviderError("Stripe returned a payment intent we cannot read.") from exc


def to_subscription(data: dict[str, Any]) -> Subscription:
    try:
        period_end = data.get("current_period_end")
        if period_end is None:  # API versions from 2025-03 keep the period on the items
            period_end = data["items"]["data"][0]["current_period_end"]
        status = data["status"]
        return Subscription(
            id=data["id"],
            status=_SUBSCRIPTION_STATUS.get(status, status),
            cancel_at_period_end=bool(data.get("cancel_at_period_end")),
            current_period_end=datetime.fromtimestamp(int(period_end), tz=UTC),
            metadata={str(k): str(v) for k, v in (data.get("metadata") or {}).items()},
        )
    except (KeyError, IndexError, TypeError, ValueError) as exc:
        raise ProviderError("Stripe returned a subscription we cannot read.") from exc


class StripePaymentProvider:
    name = "stripe"

    def __init__(
        self,
        *,
        api_key: str,
        base_url: str = "https://api.stripe.com",
        price_ids: dict[str, str] | None = None,
        client: httpx.Client | None = None,
        transport: httpx.BaseTransport | None = None,
        timeout: httpx.Timeout = TIMEOUT,
    ):
        if not api_key:
            raise ProviderUnavailable("Stripe is not configured (STRIPE_API_KEY is empty).")
        self.api_key = api_key
        self.base_url = base_url.rstrip("/")
        self.price_ids = dict(price_ids or {})
        self.client = client
        self.transport = transport
        self.timeout = timeout

    @classmethod
    def from_settings(cls, **kwargs) -> StripePaymentProvider:
        return cls(
            api_key=settings.STRIPE_API_KEY,
            base_url=settings.STRIPE_API_BASE,
            price_ids=settings.STRIPE_PRICE_IDS,
            **kwargs,
        )

    # --- HTTP -------------------------------------------------------------------------------------

    def _request(
        self, method: str, path: str, *, form: Form | None = None, params: Form | None = None, create: bool = False
    ) -> dict[str, Any]:
        headers = {"Authorization": f"Bearer {self.api_key}"}
        content = None
        if form is not None:
            # Encoded here: Stripe's nested keys (metadata[x], items[0][price]) repeat and keep their order.
            content = urlencode(form).encode()
            headers["Content-Type"] = "application/x-www-form-urlencoded"
        if create:
            headers["Idempotency-Key"] = str(uuid.uuid4())
        url = f"{self.base_url}{path}"
        try:
            if self.client is not None:
                response = self.client.request(
                    method, url, content=content, params=params, headers=headers, timeout=self.timeout
                )
            else:
                with httpx.Client(transport=self.transport, timeout=self.timeout) as client:
                    response = client.request(method, url, content=content, params=params, headers=headers)
        except httpx.TimeoutException as exc:
            raise ProviderUnavailable("Stripe did not answer in time.") from exc
        except httpx.HTTPError as exc:
            raise ProviderUnavailable("Stripe cannot be reached.") from exc
        return self._answer(response)

    @staticmethod
    def _answer(response: httpx.Response) -> dict[str, Any]:
        try:
            body = response.json()
        except ValueError:
            body = None
        if response.status_code == 429:
            raise ProviderUnavailable("Stripe is rate limiting us; try again shortly.")
        if response.status_code >= 400:
            error = body.get("error") if isinstance(body, dict) else None
            message = error.get("message") if isinstance(error, dict) else None
            if response.status_code >= 500:
                raise ProviderError("Stripe failed to process the request.")
            raise ProviderError(f"Stripe refused the request: {message or response.reason_phrase}"[:300])
        if not isinstance(body, dict):
            raise ProviderError("Stripe answered with something other than a JSON object.")
        return body

    # --- Payments ---------------------------------------------------------------------------------

    def create_payment(
        self,
        *,
        amount: Decimal,
        currency: str,
        metadata: dict[str, str],
        description: str = "",
        payee: str = "",
        success_url: str = "",
        cancel_url: str = "",
    ) -> Payment:
        # Not yet a Checkout Session: `checkout_url` stays empty and the client confirms with `client_secret`;
        # payee / success_url / cancel_url are accepted for the interface and unused until then.
        currency = normalise_currency(currency)
        form: Form = [
            ("amount", str(to_minor(amount, currency))),
            ("currency", currency),
            ("capture_method", "manual"),
            ("automatic_payment_methods[enabled]", "true"),
            *_metadata_form(metadata),
        ]
        if description:
            form.append(("description", description[:1000]))
        return to_payment(self._request("POST", "/v1/payment_intents", form=form, create=True))

    def get_payment(self, payment_id: str) -> Payment:
        return to_payment(self._intent(payment_id))

    def cancel_payment(self, payment_id: str) -> Payment:
        form = [("cancellation_reason", "abandoned")]
        return to_payment(self._request("POST", f"/v1/payment_intents/{_safe_id(payment_id)}/cancel", form=form))

    def release_payment(self, payment_id: str) -> Payment:
        return to_payment(self._request("POST", f"/v1/payment_intents/{_safe_id(payment_id)}/capture", form=[]))

    def refund_payment(self, payment_id: str) -> Payment:
        intent = self._intent(payment_id)
        if intent.get("status") == "requires_capture":
            form = [("cancellation_reason", REFUND_CANCELLATION_REASON)]
            return to_payment(self._request("POST", f"/v1/payment_intents/{_safe_id(payment_id)}/cancel", form=form))
        refund = self._request("POST", "/v1/refunds", form=[("payment_intent", payment_id)], create=True)
        if refund.get("status") in ("failed", "canceled"):
            raise ProviderError(f"Stripe did not refund payment {payment_id} ({refund.get('status')}).")
        return to_payment(self._intent(payment_id))

    def _intent(self, payment_id: str) -> dict[str, Any]:
        return self._request(
            "GET", f"/v1/payment_intents/{_safe_id(payment_id)}", params=[("expand[]", "latest_charge")]
        )

    # --- Subscriptions ----------------------------------------------------------------------------

    def create_subscription(
        self,
        *,
        customer_email: str,
        plan: str,
        metadata: dict[str, str],
        success_url: str = "",
        cancel_url: str = "",
    ) -> Subscription:
        price = self.price_ids.get(plan)
        if not price:
            raise ProviderUnavailable(f"No Stripe price is configured for plan {plan!r} (STRIPE_PRICE_IDS).")
        customer = self._customer_for(customer_email)
        form: Form = [
            ("customer", customer),
            ("items[0][price]", price),
            ("payment_behavior", "default_incomplete"),
            *_metadata_form(metadata),
        ]
        return to_subscription(self._request("POST", "/v1/subscriptions", form=form, create=True))

    def get_subscription(self, subscription_id: str) -> Subscription:
        return to_subscription(self._request("GET", f"/v1/subscriptions/{_safe_id(subscription_id)}"))

    def set_cancel_at_period_end(self, subscription_id: str, cancel: bool) -> Subscription:
        form = [("cancel_at_period_end", "true" if cancel else "false")]
        return to_subscription(self._request("POST", f"/v1/subscriptions/{_safe_id(subscription_id)}", form=form))

    def _customer_for(self, email: str) -> str:
        found = self._request("GET", "/v1/customers", params=[("email", email), ("limit", "1")])
        existing = found.get("data") or []
        if existing and isinstance(existing[0], dict) and existing[0].get("id"):
            return existing[0]["id"]
        created = self._request("POST", "/v1/customers", form=[("email", email)], create=True)
        if not created.get("id"):
            raise ProviderError("Stripe created a customer without an id.")
        return created["id"]
