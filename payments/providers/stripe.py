"""Stripe, over httpx against its documented REST API (form-encoded, `Authorization: Bearer <key>`).

Every payment and subscription is a Stripe Checkout Session (`POST /v1/checkout/sessions`); its
`url` is our `checkout_url`, a page on Stripe where the customer pays or leaves.

Payments (`mode=payment`): one line item priced inline (`price_data`, minor units); the metadata is
copied to the session and to the PaymentIntent Checkout creates (`payment_intent_data[metadata]`).
Every payment is captured as soon as the customer pays (`capture_method=automatic`), so the money sits
in the platform's balance and no card authorisation can expire while a task is delivered and reviewed
(docs/payouts.md). A task payment (metadata `task_id`) also gets `payment_intent_data[transfer_group]=
task:<task id>` (the earning's source); the seller's money moves later, in a payout's own transfer.
Payments created before were held (`capture_method=manual`, `requires_capture`): `release_payment`
still captures such an intent; for an intent captured at once Stripe refuses the capture and the
adapter answers with the payment as it is (`succeeded`), so a caller that still asks changes nothing.
Refunding an intent that was never captured cancels it, which gives the authorisation back.

Checkout creates the PaymentIntent only when the customer pays, so the id we hand back is the
session's (`cs_...`): callers store it as the payment's provider reference and replace it with the
intent's `pi_...` when the first event names the intent (`checkout.session.completed`'s
`payment_intent`, or a `payment_intent.*` event whose metadata points at our record). Every method
here accepts either id: a `cs_` id is resolved to its intent when there is one; a session nobody
paid is expired instead of cancelled or refunded.

Subscriptions (`mode=subscription`): the plan's price from STRIPE_PRICE_IDS, the metadata on the
session and on the subscription (`subscription_data[metadata]`), `client_reference_id` = the team.
The `Subscription` handed back has the session's id and status `incomplete` until the customer
pays; the caller learns the `sub_...` id from `checkout.session.completed` (`subscription`) or from
the first `customer.subscription.*` event (its metadata).

Status mapping (PaymentIntent → ours):
    requires_payment_method   → requires_payment, or failed when `last_payment_error` is set
    requires_confirmation, requires_action, processing → requires_payment
    requires_capture          → succeeded (an old held payment: the money is authorised)
    succeeded                 → succeeded (captured at once: the money is in the platform's balance),
                                released (an old held payment, captured on approval),
                                refunded when its charge is refunded in full (a partial refund keeps it)
    canceled                  → cancelled, or refunded when we cancelled it as a refund
`released` of a task payment captured at once is our domain's word for "the seller's share is theirs"
(released to their earning, transferred later by a payout); Stripe's intent does not change when it
happens, so this adapter never answers it.
Subscriptions keep Stripe's words; `incomplete_expired` → canceled and `paused` → unpaid.

Paying sellers (Connect, separate charges and transfers; docs/payouts.md):
    payout account   POST /v1/accounts: `type=express`, `email`, `country`,
                     `capabilities[transfers][requested]=true`, `settings[payouts][schedule][interval]=manual`,
                     `metadata`; GET /v1/accounts/{id} → PayoutAccount. Status: `restricted` when Stripe
                     disabled the account (`requirements.disabled_reason`) or requirements are `past_due`
                     after the owner submitted their details; `active` when details are submitted and
                     payouts (and charges or the transfers capability) are enabled; otherwise `onboarding`
                     (a new account has past-due requirements until the owner fills them in: that is
                     onboarding, not a restriction).
    onboarding link  POST /v1/account_links: `account`, `refresh_url`, `return_url`, `type=account_onboarding`.
                     No Idempotency-Key: a link is single-use and expires within minutes, so a retry must
                     get a fresh one, and making one creates nothing that lasts.
    transfer         POST /v1/transfers: `amount` (minor units), `currency`, `destination`, `transfer_group`,
                     `metadata`. A payout's transfer (payments.services.payouts) sends `transfer_group=
                     payout:<payout id>`, `metadata[payout_id]` and the key `payout:<payout id>:transfer`,
                     out of the platform's balance. `source_transaction` = a payment's charge
                     (`latest_charge` of its intent, found from a `cs_`/`pi_` reference) is sent only when
                     a caller names the payment (`source_payment_id`); payouts do not.
    reversal         POST /v1/transfers/{id}/reversals: `amount`, `expand[]=transfer` (the Transfer we answer
                     is the reversed transfer, with its `amount_reversed`).
    partial refund   POST /v1/refunds: `payment_intent`, `amount`. An old held intent is not refunded but
                     captured for the rest (`amount_to_capture`): the uncaptured part goes back to the card.
    payout           POST /v1/payouts with the `Stripe-Account: <acct>` header: `amount`, `currency`,
                     `metadata`. Our accounts are created with manual payouts, so PAYOUT_SCHEDULE (ours)
                     decides when money leaves, each of our payout records is exactly one Stripe payout
                     (`po_...`), and `payout.paid` / `payout.failed` (events of the connected account, with
                     a top-level `account`) settle the record we already hold. Stripe's own automatic
                     schedule would pay out on its own and leave us to guess which earnings a payout
                     carried. Status: `paid` → paid, `failed`/`canceled` → failed, else pending.
    lookups          Stripe forgets an Idempotency-Key after about a day, so a create retried later first looks:
                     GET /v1/transfers?transfer_group=... (matched by a metadata value), GET /v1/payouts as the
                     connected account (matched by `metadata[payout_id]`), GET /v1/refunds?payment_intent=...
                     (matched by `metadata[operation]`, which every refund we make carries: its key). Every page
                     is read (`limit=100`, then `starting_after` the last id while `has_more`).
    balances         GET /v1/balance (as the connected account for theirs): available + pending by currency;
                     GET /v1/balance_transactions with `expand[]=data.source` and `created[gte]`, every page.
                     A transaction's source is named as our ledger names the object (payments.reconcile): a
                     charge by its payment intent, a connected account's incoming payment (`py_`) by its
                     transfer (`source_transfer`), anything else by its own id.

Errors: a 4xx answer is `ProviderError` (502), except 429 which is `ProviderUnavailable` (503) like
a timeout or a network failure; a 5xx answer is `ProviderError` (Stripe answered and failed). No
API key, or no price for a plan, is `ProviderUnavailable`. Every call has a timeout.

Every create sends an `Idempotency-Key` derived from the domain operation, never a random one: the
caller's key (`bid-select:<bid id>:<n>`, `team-hire:<team id>`, `credit-top-up:<top-up id>`) for the
Checkout Session, `customer:<hash of the e-mail>` for the customer a subscription needs, and
`refund:<payment intent id>` for a whole refund (also its `metadata[operation]`); so does the update
that cancels a closed account's team at the period's end (`team-cancel:<team id>`). A create that timed
out and is retried with the same key gets Stripe's first answer back instead of a second object. The
request body is deterministic (no `expires_at`: Stripe's default of 24 hours applies), because Stripe
refuses a key reused with other parameters; and Stripe replays the first answer for 24 hours even when it
was an error.
"""

from __future__ import annotations

import dataclasses
import hashlib
import re
from collections.abc import Iterator
from datetime import UTC, datetime
from decimal import Decimal
from typing import Any
from urllib.parse import urlencode

import httpx
from django.conf import settings

from core.http.errors import ProviderError, ProviderUnavailable
from core.http.outbound import DeadlineTransport
from payments.money import from_minor, normalise_currency, to_minor
from payments.providers.base import (
    BalanceTransaction,
    PaymentStatus,
    PayoutAccountStatus,
    ProviderAccount,
    ProviderPayment,
    ProviderPayout,
    ProviderSubscription,
    Refund,
    SubscriptionStatus,
    Transfer,
)

TIMEOUT = httpx.Timeout(20.0, connect=5.0)
PAGE_SIZE = "100"  # Stripe's largest page of a list
DEADLINE = 30.0  # seconds for a whole call, however slowly Stripe answers (core.http.outbound.DeadlineTransport)
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


def _metadata_form(metadata: dict[str, str], parent: str = "") -> Form:
    """`metadata[k]=v`, or `<parent>[metadata][k]=v` for a nested object's metadata."""
    prefix = f"{parent}[metadata]" if parent else "metadata"
    return [(f"{prefix}[{key}]", str(value)) for key, value in (metadata or {}).items()]


def transfer_group(metadata: dict[str, str]) -> str:
    """The transfer group of a task payment's charge, `task:<task id>` (the earning's source), so Stripe's
    dashboard groups the charge with the task; or "" for other payments. The seller's money moves later,
    by each payout's own transfer in the group `payout:<payout id>` (payments.services.payouts.payout_send)."""
    task_id = (metadata or {}).get("task_id")
    return f"task:{task_id}" if task_id else ""


def operation_key(metadata: dict[str, str]) -> str:
    """The Idempotency-Key of a create, from the domain operation its metadata names ("" for none)."""
    metadata = metadata or {}
    if metadata.get("kind") == "credit_top_up" and metadata.get("top_up_id"):
        return f"credit-top-up:{metadata['top_up_id']}"
    if metadata.get("bid_id"):
        # A bid can be selected again after its payment failed: each attempt is its own payment record.
        suffix = f":{metadata['payment_id']}" if metadata.get("payment_id") else ""
        return f"bid-select:{metadata['bid_id']}{suffix}"
    if metadata.get("team_id"):
        return f"team-hire:{metadata['team_id']}"
    return ""


def is_checkout_session(reference: str) -> bool:
    return isinstance(reference, str) and reference.startswith("cs_")


def _session_status(session: dict[str, Any]) -> str:
    """Our payment status for a session whose PaymentIntent does not exist (or is not expanded)."""
    if session.get("status") == "expired":
        return PaymentStatus.CANCELLED
    return PaymentStatus.REQUIRES_PAYMENT


def session_to_payment(session: dict[str, Any]) -> ProviderPayment:
    try:
        currency = session["currency"]
        return ProviderPayment(
            id=session["id"],
            amount=from_minor(session["amount_total"], currency),
            currency=currency,
            status=_session_status(session),
            client_secret="",
            checkout_url=session.get("url") or "",
            metadata={str(k): str(v) for k, v in (session.get("metadata") or {}).items()},
        )
    except (KeyError, TypeError, ValueError) as exc:
        raise ProviderError("Stripe returned a checkout session we cannot read.") from exc


def session_to_subscription(session: dict[str, Any]) -> ProviderSubscription:
    try:
        return ProviderSubscription(
            id=session["id"],
            status=SubscriptionStatus.INCOMPLETE,
            cancel_at_period_end=False,
            current_period_end=datetime.fromtimestamp(int(session["expires_at"]), tz=UTC),
            metadata={str(k): str(v) for k, v in (session.get("metadata") or {}).items()},
            checkout_url=session.get("url") or "",
        )
    except (KeyError, TypeError, ValueError) as exc:
        raise ProviderError("Stripe returned a checkout session we cannot read.") from exc


def _linked_id(session: dict[str, Any], field: str) -> str:
    """The id of the session's PaymentIntent / Subscription (expanded or not), or ""."""
    value = session.get(field)
    if isinstance(value, dict):
        value = value.get("id")
    return value if isinstance(value, str) else ""


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


def to_payment(intent: dict[str, Any]) -> ProviderPayment:
    try:
        currency = intent["currency"]
        return ProviderPayment(
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


def payout_account_status(account: dict[str, Any]) -> str:
    """Our PayoutAccountStatus for a Connect account (the rule is in the module docstring)."""
    requirements = account.get("requirements") or {}
    disabled = requirements.get("disabled_reason") or ""
    submitted = bool(account.get("details_submitted"))
    if disabled.startswith(("rejected", "listed", "platform_paused")) or (
        submitted and (disabled or requirements.get("past_due"))
    ):
        return PayoutAccountStatus.RESTRICTED
    transfers = (account.get("capabilities") or {}).get("transfers")
    can_receive = bool(account.get("charges_enabled")) or transfers == "active"
    if submitted and account.get("payouts_enabled") and can_receive:
        return PayoutAccountStatus.ACTIVE
    return PayoutAccountStatus.ONBOARDING


def to_payout_account(account: dict[str, Any]) -> ProviderAccount:
    try:
        profile = account.get("business_profile") or {}
        name = profile.get("name") or ((account.get("settings") or {}).get("dashboard") or {}).get("display_name")
        return ProviderAccount(
            id=account["id"],
            status=payout_account_status(account),
            payouts_enabled=bool(account.get("payouts_enabled")),
            display_name=str(name or account.get("email") or ""),
            metadata={str(k): str(v) for k, v in (account.get("metadata") or {}).items()},
        )
    except (AttributeError, KeyError, TypeError, ValueError) as exc:
        raise ProviderError("Stripe returned an account we cannot read.") from exc


def to_transfer(transfer: dict[str, Any]) -> Transfer:
    try:
        currency = transfer["currency"]
        destination = transfer["destination"]
        if isinstance(destination, dict):
            destination = destination["id"]
        return Transfer(
            id=transfer["id"],
            account_id=str(destination),
            amount=from_minor(transfer["amount"], currency),
            currency=currency,
            amount_reversed=from_minor(transfer.get("amount_reversed") or 0, currency),
            metadata={str(k): str(v) for k, v in (transfer.get("metadata") or {}).items()},
        )
    except (KeyError, TypeError, ValueError) as exc:
        raise ProviderError("Stripe returned a transfer we cannot read.") from exc


_PAYOUT_STATUS = {"paid": "paid", "failed": "failed", "canceled": "failed"}


def to_payout(payout: dict[str, Any], *, account_id: str) -> ProviderPayout:
    """A Payout; `account_id` is the account it was made as (Stripe's payout object does not name it)."""
    try:
        currency = payout["currency"]
        status = _PAYOUT_STATUS.get(payout["status"], "pending")  # pending, in_transit
        reason = payout.get("failure_message") or payout.get("failure_code") or ""
        return ProviderPayout(
            id=payout["id"],
            account_id=account_id,
            amount=from_minor(payout["amount"], currency),
            currency=currency,
            status=status,
            failure_reason=str(reason) if status == "failed" else "",
            metadata={str(k): str(v) for k, v in (payout.get("metadata") or {}).items()},
        )
    except (KeyError, TypeError, ValueError) as exc:
        raise ProviderError("Stripe returned a payout we cannot read.") from exc


def to_refund(refund: dict[str, Any]) -> Refund:
    try:
        currency = refund["currency"]
        return Refund(
            id=refund["id"],
            payment_id=_linked_id(refund, "payment_intent"),
            amount=from_minor(refund["amount"], currency),
            currency=currency,
            status=str(refund.get("status") or ""),
            metadata={str(k): str(v) for k, v in (refund.get("metadata") or {}).items()},
        )
    except (KeyError, TypeError, ValueError) as exc:
        raise ProviderError("Stripe returned a refund we cannot read.") from exc


def _balance_source(source: Any) -> tuple[str, str, str]:
    """(our name for the object, its transfer group, its payment intent) from a balance transaction's
    `source` (expanded): a charge is named by its payment intent, as our ledger names a capture; a
    connected account's incoming payment (`py_`) by the transfer that made it (`source_transfer`)."""
    if not isinstance(source, dict):
        return (source if isinstance(source, str) else ""), "", ""
    kind, object_id = source.get("object"), str(source.get("id") or "")
    intent = _linked_id(source, "payment_intent")
    group = source.get("transfer_group") or ""
    if kind == "charge":
        if transfer := _linked_id(source, "source_transfer"):
            return transfer, group, ""
        return intent or object_id, group, intent
    return object_id, str(group), intent


def to_balance_transaction(txn: dict[str, Any]) -> BalanceTransaction:
    try:
        currency = txn["currency"]
        source, group, intent = _balance_source(txn.get("source"))
        return BalanceTransaction(
            id=txn["id"],
            type=str(txn["type"]),
            amount=from_minor(txn["amount"], currency),
            fee=from_minor(txn.get("fee") or 0, currency),
            net=from_minor(txn["net"], currency),
            currency=currency,
            source=source,
            created=datetime.fromtimestamp(int(txn["created"]), tz=UTC),
            group=group,
            payment_id=intent,
        )
    except (KeyError, TypeError, ValueError) as exc:
        raise ProviderError("Stripe returned a balance transaction we cannot read.") from exc


def to_subscription(data: dict[str, Any]) -> ProviderSubscription:
    try:
        period_end = data.get("current_period_end")
        if period_end is None:  # API versions from 2025-03 keep the period on the items
            period_end = data["items"]["data"][0]["current_period_end"]
        status = data["status"]
        return ProviderSubscription(
            id=data["id"],
            status=_SUBSCRIPTION_STATUS.get(status, status),
            cancel_at_period_end=bool(data.get("cancel_at_period_end")),
            current_period_end=datetime.fromtimestamp(int(period_end), tz=UTC),
            metadata={str(k): str(v) for k, v in (data.get("metadata") or {}).items()},
            collection_paused=bool(data.get("pause_collection")),
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
        deadline: float = DEADLINE,
    ):
        if not api_key:
            raise ProviderUnavailable("Stripe is not configured (STRIPE_API_KEY is empty).")
        self.api_key = api_key
        self.base_url = base_url.rstrip("/")
        self.price_ids = dict(price_ids or {})
        self.client = client
        self.transport = transport
        self.timeout = timeout
        self.deadline = deadline

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
        self,
        method: str,
        path: str,
        *,
        form: Form | None = None,
        params: Form | None = None,
        idempotency_key: str | None = None,
        stripe_account: str | None = None,
    ) -> dict[str, Any]:
        headers = {"Authorization": f"Bearer {self.api_key}"}
        if stripe_account is not None:  # a call made as the connected account (Connect)
            headers["Stripe-Account"] = _safe_id(stripe_account)
        content = None
        if form is not None:
            # Encoded here: Stripe's nested keys (metadata[x], items[0][price]) repeat and keep their order.
            content = urlencode(form).encode()
            headers["Content-Type"] = "application/x-www-form-urlencoded"
        if idempotency_key is not None:
            if not 0 < len(idempotency_key) <= 255:
                raise ValueError("an Idempotency-Key is 1 to 255 characters")
            headers["Idempotency-Key"] = idempotency_key
        url = f"{self.base_url}{path}"
        try:
            if self.client is not None:
                response = self.client.request(
                    method, url, content=content, params=params, headers=headers, timeout=self.timeout
                )
            else:
                transport = self.transport or DeadlineTransport(self.deadline)
                with httpx.Client(transport=transport, timeout=self.timeout) as client:
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

    @staticmethod
    def _return_urls(success_url: str, cancel_url: str) -> Form:
        form: Form = []
        if success_url:
            form.append(("success_url", success_url))
        if cancel_url:
            form.append(("cancel_url", cancel_url))
        return form

    def _session(self, session_id: str) -> dict[str, Any]:
        return self._request("GET", f"/v1/checkout/sessions/{_safe_id(session_id)}")

    def _expire(self, session_id: str) -> dict[str, Any]:
        return self._request("POST", f"/v1/checkout/sessions/{_safe_id(session_id)}/expire", form=[])

    # --- Payments ---------------------------------------------------------------------------------

    def create_payment(
        self,
        *,
        amount: Decimal,
        currency: str,
        metadata: dict[str, str],
        idempotency_key: str,
        description: str = "",
        payee: str = "",
        success_url: str = "",
        cancel_url: str = "",
    ) -> ProviderPayment:
        """A Checkout Session in `mode=payment`; the returned Payment has the session's id and `url`."""
        currency = normalise_currency(currency)
        metadata = {str(k): str(v) for k, v in (metadata or {}).items()}
        name = (description or "Payment")[:250]
        form: Form = [
            ("mode", "payment"),
            ("line_items[0][quantity]", "1"),
            ("line_items[0][price_data][currency]", currency),
            ("line_items[0][price_data][unit_amount]", str(to_minor(amount, currency))),
            ("line_items[0][price_data][product_data][name]", name),
        ]
        if payee:
            form.append(("line_items[0][price_data][product_data][description]", f"Paid to {payee}"[:500]))
        form.append(("payment_intent_data[capture_method]", "automatic"))
        if group := transfer_group(metadata):
            form.append(("payment_intent_data[transfer_group]", group))
        form += [
            *_metadata_form(metadata, "payment_intent_data"),
            *_metadata_form(metadata),
        ]
        if description:
            form.append(("payment_intent_data[description]", description[:1000]))
        if reference := operation_key(metadata):
            form.append(("client_reference_id", reference[:200]))
        form += self._return_urls(success_url, cancel_url)
        key = idempotency_key or operation_key(metadata)
        session = self._request("POST", "/v1/checkout/sessions", form=form, idempotency_key=key)
        return session_to_payment(session)

    def get_payment(self, payment_id: str) -> ProviderPayment:
        if is_checkout_session(payment_id):
            session = self._session(payment_id)
            if intent_id := _linked_id(session, "payment_intent"):
                return to_payment(self._intent(intent_id))
            return session_to_payment(session)
        return to_payment(self._intent(payment_id))

    def cancel_payment(self, payment_id: str) -> ProviderPayment:
        if is_checkout_session(payment_id):
            session = self._session(payment_id)
            intent_id = _linked_id(session, "payment_intent")
            if not intent_id:
                if session.get("status") == "open":
                    session = self._expire(payment_id)
                return session_to_payment(session)
            payment_id = intent_id
        return self._intent_action(payment_id, "cancel", [("cancellation_reason", "abandoned")], done="canceled")

    def release_payment(self, payment_id: str) -> ProviderPayment:
        return self._intent_action(self._intent_id(payment_id), "capture", [], done="succeeded")

    def _intent_action(self, payment_id: str, action: str, form: Form, *, done: str) -> ProviderPayment:
        """Cancel or capture an intent; asking again once it is done is answered like the first time
        (Stripe refuses the second call), so a caller that lost the first answer can simply retry."""
        try:
            return to_payment(self._request("POST", f"/v1/payment_intents/{_safe_id(payment_id)}/{action}", form=form))
        except ProviderError:
            intent = self._intent(payment_id)
            if intent.get("status") == done:
                return to_payment(intent)
            raise

    def refund_payment(self, payment_id: str) -> ProviderPayment:
        if is_checkout_session(payment_id):
            session = self._session(payment_id)
            intent_id = _linked_id(session, "payment_intent")
            if not intent_id:  # nobody paid: there is nothing to give back, only a page to close
                if session.get("status") == "open":
                    session = self._expire(payment_id)
                return session_to_payment(session)
            payment_id = intent_id
        intent = self._intent(payment_id)
        if intent.get("status") == "requires_capture":
            form = [("cancellation_reason", REFUND_CANCELLATION_REASON)]
            return to_payment(self._request("POST", f"/v1/payment_intents/{_safe_id(payment_id)}/cancel", form=form))
        key = f"refund:{payment_id}"
        form = [("payment_intent", payment_id), ("metadata[operation]", key)]
        refund = self._request("POST", "/v1/refunds", form=form, idempotency_key=key)
        if refund.get("status") in ("failed", "canceled"):
            raise ProviderError(f"Stripe did not refund payment {payment_id} ({refund.get('status')}).")
        return to_payment(self._intent(payment_id))

    def _intent_id(self, payment_id: str) -> str:
        """The PaymentIntent behind a reference: itself, or the one its checkout session created."""
        if not is_checkout_session(payment_id):
            return payment_id
        intent_id = _linked_id(self._session(payment_id), "payment_intent")
        if not intent_id:
            raise ProviderError(f"Checkout session {payment_id} has not been paid.")
        return intent_id

    def _intent(self, payment_id: str) -> dict[str, Any]:
        return self._request(
            "GET", f"/v1/payment_intents/{_safe_id(payment_id)}", params=[("expand[]", "latest_charge")]
        )

    def _charge_id(self, payment_id: str) -> str:
        """The charge behind a payment reference (`ch_`, or the `latest_charge` of its intent)."""
        if payment_id.startswith("ch_"):
            return _safe_id(payment_id)
        intent = self._intent(self._intent_id(payment_id))
        charge = _linked_id(intent, "latest_charge")
        if not charge:
            raise ProviderError(f"Payment {payment_id} has no charge yet (status {intent.get('status')!r}).")
        return charge

    # --- Paying sellers (Connect) ----------------------------------------------------------------

    def create_payout_account(
        self, *, email: str, country: str, metadata: dict[str, str], idempotency_key: str
    ) -> ProviderAccount:
        """A Connect Express account whose payouts we trigger (manual schedule; see the module docstring)."""
        form: Form = [("type", "express")]
        # Both are optional at Stripe (the country defaults to the platform's); an empty value is refused.
        if country := (country or "").strip().upper():
            form.append(("country", country))
        if email:
            form.append(("email", email))
        form += [
            ("capabilities[transfers][requested]", "true"),
            ("settings[payouts][schedule][interval]", "manual"),
            *_metadata_form({str(k): str(v) for k, v in (metadata or {}).items()}),
        ]
        return to_payout_account(self._request("POST", "/v1/accounts", form=form, idempotency_key=idempotency_key))

    def get_payout_account(self, account_id: str) -> ProviderAccount:
        return to_payout_account(self._request("GET", f"/v1/accounts/{_safe_id(account_id)}"))

    def create_onboarding_link(self, *, account_id: str, return_url: str, refresh_url: str) -> str:
        form: Form = [
            ("account", _safe_id(account_id)),
            ("refresh_url", refresh_url),
            ("return_url", return_url),
            ("type", "account_onboarding"),
        ]
        link = self._request("POST", "/v1/account_links", form=form)
        url = link.get("url")
        if not isinstance(url, str) or not url.startswith("https://"):
            raise ProviderError("Stripe returned an account link without a URL.")
        return url

    def create_transfer(
        self,
        *,
        account_id: str,
        amount: Decimal,
        currency: str,
        transfer_group: str,
        metadata: dict[str, str],
        idempotency_key: str,
        source_payment_id: str = "",
    ) -> Transfer:
        currency = normalise_currency(currency)
        form: Form = [
            ("amount", str(to_minor(amount, currency))),
            ("currency", currency),
            ("destination", _safe_id(account_id)),
        ]
        if transfer_group:
            form.append(("transfer_group", transfer_group))
        if source_payment_id:
            form.append(("source_transaction", self._charge_id(source_payment_id)))
        form += _metadata_form({str(k): str(v) for k, v in (metadata or {}).items()})
        return to_transfer(self._request("POST", "/v1/transfers", form=form, idempotency_key=idempotency_key))

    def reverse_transfer(self, *, transfer_id: str, amount: Decimal, idempotency_key: str) -> Transfer:
        path = f"/v1/transfers/{_safe_id(transfer_id)}/reversals"
        # The currency is the transfer's: read it first, to turn `amount` into minor units.
        transfer = self._request("GET", f"/v1/transfers/{_safe_id(transfer_id)}")
        currency = transfer.get("currency")
        if not isinstance(currency, str):
            raise ProviderError("Stripe returned a transfer we cannot read.")
        form: Form = [("amount", str(to_minor(amount, currency))), ("expand[]", "transfer")]
        reversal = self._request("POST", path, form=form, idempotency_key=idempotency_key)
        reversed_transfer = reversal.get("transfer")
        if not isinstance(reversed_transfer, dict):
            raise ProviderError("Stripe returned a transfer reversal we cannot read.")
        return dataclasses.replace(to_transfer(reversed_transfer), reversal_id=str(reversal.get("id") or ""))

    def refund_payment_partially(self, *, payment_id: str, amount: Decimal, idempotency_key: str) -> ProviderPayment:
        intent_id = self._intent_id(payment_id)
        intent = self._intent(intent_id)
        currency = intent.get("currency")
        if not isinstance(currency, str):
            raise ProviderError("Stripe returned a payment intent we cannot read.")
        refund_minor = to_minor(amount, currency)
        if intent.get("status") == "requires_capture":  # an old held payment: keep only the rest
            rest = int(intent.get("amount") or 0) - refund_minor
            if rest <= 0:
                return self.refund_payment(intent_id)
            form: Form = [("amount_to_capture", str(rest))]
            return self._intent_action(intent_id, "capture", form, done="succeeded")
        form = [("payment_intent", intent_id), ("amount", str(refund_minor)), ("metadata[operation]", idempotency_key)]
        refund = self._request("POST", "/v1/refunds", form=form, idempotency_key=idempotency_key)
        if refund.get("status") in ("failed", "canceled"):
            raise ProviderError(f"Stripe did not refund payment {intent_id} ({refund.get('status')}).")
        return to_payment(self._intent(intent_id))

    def create_payout(
        self, *, account_id: str, amount: Decimal, currency: str, metadata: dict[str, str], idempotency_key: str
    ) -> ProviderPayout:
        """A payout of the connected account's balance to its bank, made as that account."""
        currency = normalise_currency(currency)
        form: Form = [
            ("amount", str(to_minor(amount, currency))),
            ("currency", currency),
            *_metadata_form({str(k): str(v) for k, v in (metadata or {}).items()}),
        ]
        payout = self._request(
            "POST", "/v1/payouts", form=form, idempotency_key=idempotency_key, stripe_account=account_id
        )
        return to_payout(payout, account_id=account_id)

    def get_payout(self, *, account_id: str, payout_id: str) -> ProviderPayout:
        payout = self._request("GET", f"/v1/payouts/{_safe_id(payout_id)}", stripe_account=account_id)
        return to_payout(payout, account_id=account_id)

    # --- Looking objects up (a create retried after Stripe forgot its key; docs/payouts.md) -------

    def _list(self, path: str, params: Form, *, stripe_account: str | None = None) -> Iterator[dict[str, Any]]:
        """Every object of a Stripe list, a page at a time (`limit=100`, then `starting_after` = the last
        id while `has_more`)."""
        after = ""
        while True:
            page_params = [*params, ("limit", PAGE_SIZE)] + ([("starting_after", after)] if after else [])
            page = self._request("GET", path, params=page_params, stripe_account=stripe_account)
            data = page.get("data")
            if not isinstance(data, list):
                raise ProviderError(f"Stripe returned a list we cannot read ({path}).")
            for item in data:
                if isinstance(item, dict):
                    yield item
            if not page.get("has_more") or not data or not isinstance(data[-1], dict):
                return
            after = _safe_id(str(data[-1].get("id") or ""))

    def find_transfer(self, *, transfer_group: str, metadata_key: str, metadata_value: str) -> Transfer | None:
        for transfer in self._list("/v1/transfers", [("transfer_group", transfer_group)]):
            if (transfer.get("metadata") or {}).get(metadata_key) == metadata_value:
                return to_transfer(transfer)
        return None

    def find_payout(self, *, account_id: str, payout_id: str) -> ProviderPayout | None:
        for payout in self._list("/v1/payouts", [], stripe_account=account_id):
            if (payout.get("metadata") or {}).get("payout_id") == payout_id:
                return to_payout(payout, account_id=account_id)
        return None

    def find_refund(self, *, payment_id: str, idempotency_key: str) -> Refund | None:
        intent_id = self._intent_id(payment_id)
        for refund in self._list("/v1/refunds", [("payment_intent", _safe_id(intent_id))]):
            if (refund.get("metadata") or {}).get("operation") == idempotency_key:
                return to_refund(refund)
        return None

    # --- Balances (payments.reconcile) -----------------------------------------------------------

    def balance(self, *, account_id: str = "") -> dict[str, Decimal]:
        """`GET /v1/balance` (as the connected account when given): available + pending, by currency."""
        body = self._request("GET", "/v1/balance", stripe_account=account_id or None)
        totals: dict[str, int] = {}
        try:
            for part in ("available", "pending"):
                for entry in body.get(part) or []:
                    currency = normalise_currency(entry["currency"])
                    totals[currency] = totals.get(currency, 0) + int(entry["amount"])
        except (KeyError, TypeError, ValueError) as exc:
            raise ProviderError("Stripe returned a balance we cannot read.") from exc
        return {currency: from_minor(amount, currency) for currency, amount in totals.items()}

    def balance_transactions(
        self, *, account_id: str = "", created_after: datetime | None = None
    ) -> Iterator[BalanceTransaction]:
        """`GET /v1/balance_transactions` with each `source` expanded (to name it as our ledger does),
        `created[gte]` when given, every page; newest first, as Stripe lists them."""
        params: Form = [("expand[]", "data.source")]
        if created_after is not None:
            params.append(("created[gte]", str(int(created_after.timestamp()))))
        for txn in self._list("/v1/balance_transactions", params, stripe_account=account_id or None):
            yield to_balance_transaction(txn)

    # --- Subscriptions ----------------------------------------------------------------------------

    def create_subscription(
        self,
        *,
        customer_email: str,
        plan: str,
        metadata: dict[str, str],
        idempotency_key: str,
        success_url: str = "",
        cancel_url: str = "",
    ) -> ProviderSubscription:
        """A Checkout Session in `mode=subscription`; the Subscription returned has the session's id."""
        price = self.price_ids.get(plan)
        if not price:
            raise ProviderUnavailable(f"No Stripe price is configured for plan {plan!r} (STRIPE_PRICE_IDS).")
        metadata = {str(k): str(v) for k, v in (metadata or {}).items()}
        customer = self._customer_for(customer_email)
        form: Form = [
            ("mode", "subscription"),
            ("customer", customer),
            ("line_items[0][price]", price),
            ("line_items[0][quantity]", "1"),
            *_metadata_form(metadata, "subscription_data"),
            *_metadata_form(metadata),
        ]
        if metadata.get("team_id"):
            form.append(("client_reference_id", metadata["team_id"]))
        form += self._return_urls(success_url, cancel_url)
        key = idempotency_key or operation_key(metadata)
        session = self._request("POST", "/v1/checkout/sessions", form=form, idempotency_key=key)
        return session_to_subscription(session)

    def get_subscription(self, subscription_id: str) -> ProviderSubscription:
        if is_checkout_session(subscription_id):
            session = self._session(subscription_id)
            if not (subscription_id := _linked_id(session, "subscription")):
                return session_to_subscription(session)
        return to_subscription(self._request("GET", f"/v1/subscriptions/{_safe_id(subscription_id)}"))

    def set_cancel_at_period_end(
        self, subscription_id: str, cancel: bool, *, idempotency_key: str | None = None
    ) -> ProviderSubscription:
        if is_checkout_session(subscription_id):
            subscription_id = _linked_id(self._session(subscription_id), "subscription")
            if not subscription_id:
                raise ProviderError("The subscription's checkout has not been completed.")
        form = [("cancel_at_period_end", "true" if cancel else "false")]
        path = f"/v1/subscriptions/{_safe_id(subscription_id)}"
        return to_subscription(self._request("POST", path, form=form, idempotency_key=idempotency_key))

    def set_collection_paused(
        self, subscription_id: str, paused: bool, *, idempotency_key: str
    ) -> ProviderSubscription:
        """`pause_collection[behavior]=void` (invoices made while paused are voided), or `pause_collection=` (an
        empty value clears it: collection resumes)."""
        if is_checkout_session(subscription_id):
            subscription_id = _linked_id(self._session(subscription_id), "subscription")
            if not subscription_id:
                raise ProviderError("The subscription's checkout has not been completed.")
        form = [("pause_collection[behavior]", "void")] if paused else [("pause_collection", "")]
        path = f"/v1/subscriptions/{_safe_id(subscription_id)}"
        return to_subscription(self._request("POST", path, form=form, idempotency_key=idempotency_key))

    def _customer_for(self, email: str) -> str:
        found = self._request("GET", "/v1/customers", params=[("email", email), ("limit", "1")])
        existing = found.get("data") or []
        if existing and isinstance(existing[0], dict) and existing[0].get("id"):
            return existing[0]["id"]
        key = "customer:" + hashlib.sha256(email.strip().lower().encode()).hexdigest()[:40]
        created = self._request("POST", "/v1/customers", form=[("email", email)], idempotency_key=key)
        if not created.get("id"):
            raise ProviderError("Stripe created a customer without an id.")
        return created["id"]
