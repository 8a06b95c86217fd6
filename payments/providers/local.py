"""The `local` payment provider: a real provider whose state is in our own database.

It keeps payment intents and subscriptions (payments.models.LocalPayment / LocalSubscription), answers
with Stripe-like ids, and gives each one a hosted checkout page on this server (`checkout_url`,
`/checkout/{session}`, payments.checkout). The customer paying there, or `manage.py payments_simulate`,
settles them through `simulate_payment()` / `simulate_subscription()`, which change its state and
build the matching signed provider event for our own webhook. Event objects look like
Stripe's: amounts in minor units, Stripe's status words, Unix timestamps.

A task payment's `succeeded` means captured: the money is the platform's until released to a seller
(docs/payouts.md); `release_payment` still captures a payment held before that change. Sellers' payout
accounts, onboarding links, transfers, reversals, partial refunds and payouts are `LocalConnectObject`
rows; the hosted onboarding page (`/payouts/onboarding/{link}`, payments.onboarding) activates an account
and builds its `account.updated` event.

Money moves as at a real provider: every capture, refund, transfer, reversal, payout, failed payout and
dispute writes its balance transactions (payments.providers.local_balance) in the same transaction, so the
platform's and each account's `balance()` is what moved, and a transfer, payout or reversal larger than the
balance it comes out of is refused. `simulate_dispute`, `simulate_payout_failure` and
`simulate_dashboard_refund` play what happens at a provider outside our calls, with Stripe's events.

Creates are idempotent like Stripe's: the `idempotency_key` is a unique column, so the same key
answers with the same object (in its current state) and never makes a second row, even when two
creates with it race; reusing a key with different parameters is refused, as Stripe refuses it.
"""

from __future__ import annotations

import dataclasses
import json
import secrets
import time
from collections.abc import Iterator
from datetime import UTC, datetime, timedelta
from decimal import Decimal
from typing import Any

from django.conf import settings
from django.db import IntegrityError, transaction
from django.urls import reverse
from django.utils import timezone

import payments.providers.local_balance as local_balance
from core.http.errors import ProviderError
from payments import signing
from payments.models import (
    LocalBalanceTransaction,
    LocalCheckoutSession,
    LocalConnectObject,
    LocalPayment,
    LocalSubscription,
)
from payments.money import from_minor, normalise_currency, to_minor
from payments.provider_events import SignedEvent, build_event, provider_id, signing_secret
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

PERIOD = timedelta(days=30)
# As long as Stripe keeps a Checkout Session open.
CHECKOUT_LIFETIME = timedelta(hours=24)
DEFAULT_PAYEE = "Brand Marketing and Task Platform"

PAYMENT_OUTCOMES = ("succeeded", "failed")
# What `simulate_dispute` can make of a dispute: open one (`needs_response`: the funds are withdrawn at once;
# `warning_needs_response`: an inquiry, nothing withdrawn), move it (`under_review`, `warning_under_review`)
# or close it (Stripe's closing statuses; only `lost` keeps the money withdrawn).
DISPUTE_OPEN = ("needs_response", "warning_needs_response")
DISPUTE_UPDATE = ("under_review", "warning_under_review")
DISPUTE_CLOSE = ("won", "lost", "warning_closed", "prevented")
DISPUTE_STATUSES = (*DISPUTE_OPEN, *DISPUTE_UPDATE, *DISPUTE_CLOSE)
# Disputes are LocalConnectObject rows of this kind: `status` open or closed, `data` Stripe's status, the reason,
# whether the money was withdrawn and reinstated.
DISPUTE = "dispute"
SUBSCRIPTION_OUTCOMES = ("paid", "payment_failed", "updated", "deleted")

# Our payment vocabulary → the PaymentIntent status Stripe would show in an event.
_STRIPE_PAYMENT_STATUS = {
    PaymentStatus.REQUIRES_PAYMENT: "requires_payment_method",
    PaymentStatus.SUCCEEDED: "succeeded",
    PaymentStatus.FAILED: "requires_payment_method",
    PaymentStatus.CANCELLED: "canceled",
    PaymentStatus.RELEASED: "succeeded",
    PaymentStatus.REFUNDED: "succeeded",
}


def checkout_url(session_id: str) -> str:
    """The absolute URL of a checkout page: PUBLIC_BASE_URL (this server's origin) + /checkout/{id}."""
    return settings.PUBLIC_BASE_URL.rstrip("/") + reverse("checkout", args=[session_id])


def _open_checkout(
    *, payment: LocalPayment | None = None, subscription: LocalSubscription | None = None, **fields: str
) -> LocalCheckoutSession:
    return LocalCheckoutSession.objects.create(
        id=secrets.token_urlsafe(32),
        payment=payment,
        subscription=subscription,
        expires_at=timezone.now() + CHECKOUT_LIFETIME,
        **fields,
    )


def _payment(row: LocalPayment) -> ProviderPayment:
    session_id = LocalCheckoutSession.objects.filter(payment=row).values_list("id", flat=True).first()
    return ProviderPayment(
        id=row.id,
        amount=from_minor(row.amount_minor, row.currency),
        currency=row.currency,
        status=row.status,
        client_secret=row.client_secret,
        checkout_url=checkout_url(session_id) if session_id else "",
        metadata=dict(row.metadata),
    )


def onboarding_url(link_id: str) -> str:
    """The absolute URL of a local onboarding page (payments.onboarding), like `checkout_url`."""
    return settings.PUBLIC_BASE_URL.rstrip("/") + reverse("payout-onboarding", args=[link_id])


def _account(row: LocalConnectObject) -> ProviderAccount:
    return ProviderAccount(
        id=row.id,
        status=row.status,
        payouts_enabled=row.status == PayoutAccountStatus.ACTIVE,
        display_name=row.data.get("display_name", ""),
        metadata=dict(row.data.get("metadata", {})),
    )


def account_event_object(row: LocalConnectObject) -> dict[str, Any]:
    """An `account.updated` object as Stripe shapes a Connect account."""
    active = row.status == PayoutAccountStatus.ACTIVE
    return {
        "id": row.id,
        "object": "account",
        "type": "express",
        "email": row.data.get("email", ""),
        "charges_enabled": active,
        "payouts_enabled": active,
        "details_submitted": row.status != PayoutAccountStatus.ONBOARDING,
        "business_profile": {"name": row.data.get("display_name", "")},
        "requirements": {
            "currently_due": [] if active else ["external_account"],
            "disabled_reason": None if active else "requirements.past_due",
        },
        "metadata": dict(row.data.get("metadata", {})),
    }


def _transfer(row: LocalConnectObject) -> Transfer:
    return Transfer(
        id=row.id,
        account_id=row.account_id,
        amount=from_minor(row.amount_minor, row.currency),
        currency=row.currency,
        amount_reversed=from_minor(row.data.get("amount_reversed", 0), row.currency),
        metadata=dict(row.data.get("metadata", {})),
    )


def _payout(row: LocalConnectObject) -> ProviderPayout:
    return ProviderPayout(
        id=row.id,
        account_id=row.account_id,
        amount=from_minor(row.amount_minor, row.currency),
        currency=row.currency,
        status=row.status,
        failure_reason=row.data.get("failure_reason", ""),
        metadata=dict(row.data.get("metadata", {})),
    )


def _refund(row: LocalConnectObject) -> Refund:
    return Refund(
        id=row.id,
        payment_id=row.target_id,
        amount=from_minor(row.amount_minor, row.currency),
        currency=row.currency,
        status=row.status,
        metadata=dict(row.data.get("metadata", {})),
    )


def charge_id(payment_id: str) -> str:
    """The id of a local payment's charge (`ch_` + the intent's suffix): one charge per payment."""
    return "ch_" + payment_id.removeprefix("pi_")


def connected_event(event_type: str, obj: dict[str, Any], *, account: str) -> SignedEvent:
    """An event that happened on a connected account: Stripe names the account at the top (`account`)."""
    now = int(time.time())
    event = {
        "id": provider_id("evt"),
        "object": "event",
        "type": event_type,
        "created": now,
        "livemode": False,
        "account": account,
        "data": {"object": obj},
    }
    body = json.dumps(event, separators=(",", ":"), sort_keys=True).encode()
    header = signing.signature_header(body, [signing_secret()], now)
    return SignedEvent(
        event_id=event["id"],
        event_type=event_type,
        body=body,
        headers={"Content-Type": "application/json", signing.HEADER: header},
    )


def _subscription(row: LocalSubscription) -> ProviderSubscription:
    session_id = (
        LocalCheckoutSession.objects.filter(subscription=row)
        .order_by("-created_at")
        .values_list("id", flat=True)
        .first()
    )
    return ProviderSubscription(
        id=row.id,
        status=row.status,
        cancel_at_period_end=row.cancel_at_period_end,
        current_period_end=row.current_period_end.astimezone(UTC),
        metadata=dict(row.metadata),
        checkout_url=checkout_url(session_id) if session_id else "",
        collection_paused=row.collection_paused,
    )


def _metadata(metadata: dict[str, Any]) -> dict[str, str]:
    return {str(k): str(v) for k, v in (metadata or {}).items()}


def payment_event_object(row: LocalPayment) -> dict[str, Any]:
    obj: dict[str, Any] = {
        "id": row.id,
        "object": "payment_intent",
        "amount": row.amount_minor,
        "currency": row.currency,
        "status": _STRIPE_PAYMENT_STATUS[row.status],
        "description": row.description,
        "metadata": dict(row.metadata),
        "created": int(row.created_at.timestamp()),
        "last_payment_error": None,
    }
    if row.status == PaymentStatus.FAILED:
        obj["last_payment_error"] = {"code": "card_declined", "message": "Your card was declined."}
    return obj


def charge_event_object(row: LocalPayment) -> dict[str, Any]:
    """A payment's charge as Stripe shapes it (`charge.refunded`): what was captured and refunded."""
    return {
        "id": charge_id(row.id),
        "object": "charge",
        "amount": row.amount_minor,
        "amount_captured": row.amount_minor,
        "amount_refunded": row.amount_refunded_minor,
        "refunded": row.amount_refunded_minor >= row.amount_minor,
        "captured": True,
        "currency": row.currency,
        "payment_intent": row.id,
        "transfer_group": local_balance.payment_group(row) or None,
        "metadata": dict(row.metadata),
        "created": int(row.created_at.timestamp()),
    }


def payout_event_object(row: LocalConnectObject) -> dict[str, Any]:
    """A payout as Stripe shapes it in `payout.*` events (made on the connected account)."""
    failed = row.status == "failed"
    return {
        "id": row.id,
        "object": "payout",
        "amount": row.amount_minor,
        "currency": row.currency,
        "status": row.status,
        "method": "standard",
        "failure_code": row.data.get("failure_code") if failed else None,
        "failure_message": row.data.get("failure_reason") if failed else None,
        "metadata": dict(row.data.get("metadata", {})),
        "created": int(row.created_at.timestamp()),
    }


def dispute_event_object(row: LocalConnectObject) -> dict[str, Any]:
    """A dispute as Stripe shapes it in `charge.dispute.*` events, with every balance transaction it made
    so far (`funds_withdrawn`: amount -D, fee F, net -(D+F); `funds_reinstated`: +D)."""
    moves = LocalBalanceTransaction.objects.filter(account="", source=row.id).order_by("created_at", "id")
    return {
        "id": row.id,
        "object": "dispute",
        "amount": row.amount_minor,
        "currency": row.currency,
        "charge": charge_id(row.target_id),
        "payment_intent": row.target_id,
        "reason": row.data.get("reason", "fraudulent"),
        "status": row.data.get("status", "needs_response"),
        "is_charge_refundable": False,
        "balance_transactions": [local_balance.event_object(move) for move in moves],
        "metadata": {},
        "created": int(row.created_at.timestamp()),
    }


def dispute_fee_minor(currency: str) -> int:
    """PAYMENTS_LOCAL_DISPUTE_FEE (major units of the payment's currency) in minor units; 0 for none."""
    fee = Decimal(str(settings.PAYMENTS_LOCAL_DISPUTE_FEE))
    return to_minor(fee, currency) if fee > 0 else 0


def subscription_event_object(row: LocalSubscription) -> dict[str, Any]:
    return {
        "id": row.id,
        "object": "subscription",
        "status": row.status,
        "cancel_at_period_end": row.cancel_at_period_end,
        "current_period_start": int(row.current_period_start.timestamp()),
        "current_period_end": int(row.current_period_end.timestamp()),
        "customer_email": row.customer_email,
        "plan": row.plan,
        "metadata": dict(row.metadata),
    }


def invoice_event_object(row: LocalSubscription, *, paid: bool) -> dict[str, Any]:
    return {
        "id": provider_id("in"),
        "object": "invoice",
        "subscription": row.id,
        "status": "paid" if paid else "open",
        "paid": paid,
        "customer_email": row.customer_email,
        "period_start": int(row.current_period_start.timestamp()),
        "period_end": int(row.current_period_end.timestamp()),
        "metadata": dict(row.metadata),
    }


def _create_once(model, idempotency_key: str, **fields):
    """The row created with this key: the existing one, or a new one (a concurrent twin's if it won)."""
    if not isinstance(idempotency_key, str) or not 0 < len(idempotency_key) <= 255:
        raise ValueError("idempotency_key must be a non-empty string of at most 255 characters")
    existing = model.objects.filter(idempotency_key=idempotency_key).first()
    if existing is not None:
        return existing
    try:
        with transaction.atomic():
            return model.objects.create(idempotency_key=idempotency_key, **fields)
    except IntegrityError:  # a concurrent create with the same key committed first
        return model.objects.get(idempotency_key=idempotency_key)


def _same_parameters(row, idempotency_key: str, **expected) -> None:
    if any(getattr(row, name) != value for name, value in expected.items()):
        raise ProviderError(
            f"Idempotency key {idempotency_key!r} was first used with different parameters; use a new key."
        )


class LocalPaymentProvider:
    name = "local"

    # --- Payments ----------------------------------------------------------------------------

    @transaction.atomic
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
        currency = normalise_currency(currency)
        payment_id = provider_id("pi")
        row = _create_once(
            LocalPayment,
            idempotency_key,
            id=payment_id,
            amount_minor=to_minor(amount, currency),
            currency=currency,
            client_secret=f"{payment_id}_secret_{secrets.token_urlsafe(18)}",
            description=description[:500],
            metadata=_metadata(metadata),
        )
        _same_parameters(row, idempotency_key, amount_minor=to_minor(amount, currency), currency=currency)
        if not LocalCheckoutSession.objects.filter(payment=row).exists():  # a retry keeps the first page
            _open_checkout(
                payment=row, payee=(payee or DEFAULT_PAYEE)[:200], success_url=success_url, cancel_url=cancel_url
            )
        return _payment(row)

    def get_payment(self, payment_id: str) -> ProviderPayment:
        return _payment(self._payment_row(payment_id))

    def cancel_payment(self, payment_id: str) -> ProviderPayment:
        return self._move(payment_id, PaymentStatus.CANCELLED, allowed_from=(PaymentStatus.REQUIRES_PAYMENT,))

    def release_payment(self, payment_id: str) -> ProviderPayment:
        return self._move(payment_id, PaymentStatus.RELEASED, allowed_from=(PaymentStatus.SUCCEEDED,))

    @transaction.atomic
    def refund_payment(self, payment_id: str) -> ProviderPayment:
        """Refund what is left (a `re_` made under `refund:<payment id>`, as Stripe's adapter keys it)."""
        row = self._payment_row(payment_id, lock=True)
        if row.status == PaymentStatus.REFUNDED:
            return _payment(row)  # asking twice is answered like the first time
        if row.status not in (PaymentStatus.SUCCEEDED, PaymentStatus.RELEASED):
            raise ProviderError(f"Payment {payment_id} is {row.status} and cannot become refunded.")
        self._refund_once(row, row.amount_minor - row.amount_refunded_minor, f"refund:{row.id}")
        return _payment(row)

    @transaction.atomic
    def refund_payment_partially(self, *, payment_id: str, amount: Decimal, idempotency_key: str) -> ProviderPayment:
        row = self._payment_row(payment_id, lock=True)
        self._refund_once(row, to_minor(amount, row.currency), idempotency_key)
        return _payment(row)

    def _refund_once(self, row: LocalPayment, minor: int, idempotency_key: str, *, dashboard: bool = False) -> Refund:
        """Refund `minor` of the locked payment `row` once per key, out of the platform's balance."""
        refund = _create_once(
            LocalConnectObject,
            idempotency_key,
            id=provider_id("re"),
            kind=LocalConnectObject.Kind.REFUND,
            target_id=row.id,
            amount_minor=minor,
            currency=row.currency,
            status="pending",
            data={"metadata": {} if dashboard else {"operation": idempotency_key}},
        )
        _same_parameters(refund, idempotency_key, kind=LocalConnectObject.Kind.REFUND, target_id=row.id)
        if refund.status == "succeeded":
            return _refund(refund)  # the same key again: already refunded
        if row.status not in (PaymentStatus.SUCCEEDED, PaymentStatus.RELEASED):
            raise ProviderError(f"Payment {row.id} is {row.status} and cannot be refunded.")
        if withdrawn := self._withdrawing_dispute(row):
            raise ProviderError(
                f"Payment {row.id} cannot be refunded: dispute {withdrawn} withdrew its funds "
                "(Stripe's `is_charge_refundable: false`)."
            )
        if not 0 < minor <= row.amount_minor - row.amount_refunded_minor:
            raise ProviderError(
                f"Refund of {from_minor(max(minor, 0), row.currency)} exceeds what is left of payment {row.id}."
            )
        row.amount_refunded_minor += minor
        if row.amount_refunded_minor == row.amount_minor:
            row.status = PaymentStatus.REFUNDED
        row.save(update_fields=["amount_refunded_minor", "status", "updated_at"])
        LocalConnectObject.objects.filter(pk=refund.pk).update(status="succeeded")
        refund.status = "succeeded"
        if self._captured(row):
            local_balance.book(
                account="",
                type="refund",
                amount_minor=-minor,
                currency=row.currency,
                source=refund.id,
                group=local_balance.payment_group(row),
            )
        return _refund(refund)

    @staticmethod
    def _withdrawing_dispute(row: LocalPayment) -> str:
        """The id of a dispute of the payment whose funds are withdrawn and not reinstated (an open
        chargeback, or a lost one), or "". Stripe refuses to refund such a charge (the dispute's
        `is_charge_refundable` is false): the bank already took the money back. An inquiry withdraws
        nothing, and a won dispute gave the money back, so either leaves the charge refundable."""
        disputes = LocalConnectObject.objects.filter(kind=DISPUTE, target_id=row.id)
        for dispute_id, data in disputes.values_list("id", "data"):
            if (data or {}).get("withdrawn") and not (data or {}).get("reinstated"):
                return dispute_id
        return ""

    @staticmethod
    def _captured(row: LocalPayment) -> bool:
        """Whether the payment's money entered the platform's balance (its charge was booked)."""
        return LocalBalanceTransaction.objects.filter(account="", type="charge", source=row.id).exists()

    @transaction.atomic
    def simulate_cancel(self, payment_id: str) -> tuple[ProviderPayment, SignedEvent]:
        """A held payment's authorisation expires: the provider cancels it (`payment_intent.canceled`).
        A payment paid here was captured, so its money leaves the platform's balance again (this plays
        a held payment from before capture on pay; docs/payouts.md#held-payments)."""
        row = self._payment_row(payment_id, lock=True)
        if row.status not in (PaymentStatus.SUCCEEDED, PaymentStatus.REQUIRES_PAYMENT, PaymentStatus.CANCELLED):
            raise ProviderError(f"Payment {payment_id} is {row.status} and cannot expire.")
        if row.status == PaymentStatus.SUCCEEDED and self._captured(row):
            left = row.amount_minor - row.amount_refunded_minor
            local_balance.book(
                account="",
                type="authorization_expired",
                amount_minor=-left,
                currency=row.currency,
                source=row.id,
                group=local_balance.payment_group(row),
            )
        row.status = PaymentStatus.CANCELLED
        row.save(update_fields=["status", "updated_at"])
        obj = payment_event_object(row) | {"cancellation_reason": "automatic"}
        return _payment(row), build_event("payment_intent.canceled", obj)

    @transaction.atomic
    def simulate_payment(self, payment_id: str, outcome: str) -> tuple[ProviderPayment, SignedEvent]:
        """The customer pays (or the card is declined): settle the payment and build its event. A paid
        payment is captured: its money enters the platform's balance (a `charge` balance transaction).

        Settling a payment already in that state again only builds a fresh event (to send again).
        """
        if outcome not in PAYMENT_OUTCOMES:
            raise ValueError(f"outcome must be one of {', '.join(PAYMENT_OUTCOMES)}")
        before = self._payment_row(payment_id, lock=True).status
        payment = self._move(payment_id, outcome, allowed_from=(PaymentStatus.REQUIRES_PAYMENT,))
        row = self._payment_row(payment_id)
        if outcome == PaymentStatus.SUCCEEDED and before == PaymentStatus.REQUIRES_PAYMENT:
            local_balance.book(
                account="",
                type="charge",
                amount_minor=row.amount_minor,
                currency=row.currency,
                source=row.id,
                group=local_balance.payment_group(row),
            )
        event_type = "payment_intent.succeeded" if outcome == "succeeded" else "payment_intent.payment_failed"
        return payment, build_event(event_type, payment_event_object(row))

    def _payment_row(self, payment_id: str, *, lock: bool = False) -> LocalPayment:
        rows = LocalPayment.objects.select_for_update() if lock else LocalPayment.objects
        row = rows.filter(id=payment_id).first()
        if row is None:
            raise ProviderError(f"No such payment: {payment_id!r}.")
        return row

    @transaction.atomic
    def _move(self, payment_id: str, target: str, *, allowed_from: tuple[str, ...]) -> ProviderPayment:
        row = self._payment_row(payment_id, lock=True)
        if row.status == target:
            return _payment(row)  # asking twice is answered like the first time
        if row.status not in allowed_from:
            raise ProviderError(f"Payment {payment_id} is {row.status} and cannot become {target}.")
        row.status = target
        row.save(update_fields=["status", "updated_at"])
        return _payment(row)

    # --- Paying sellers (docs/payouts.md) ------------------------------------------------------

    def create_payout_account(
        self, *, email: str, country: str, metadata: dict[str, str], idempotency_key: str
    ) -> ProviderAccount:
        row = _create_once(
            LocalConnectObject,
            idempotency_key,
            id=provider_id("acct"),
            kind=LocalConnectObject.Kind.ACCOUNT,
            status=PayoutAccountStatus.ONBOARDING,
            data={"email": email, "country": country, "metadata": _metadata(metadata)},
        )
        _same_parameters(row, idempotency_key, kind=LocalConnectObject.Kind.ACCOUNT)
        return _account(row)

    def get_payout_account(self, account_id: str) -> ProviderAccount:
        return _account(self._connect_row(account_id, LocalConnectObject.Kind.ACCOUNT))

    def create_onboarding_link(self, *, account_id: str, return_url: str, refresh_url: str) -> str:
        self._connect_row(account_id, LocalConnectObject.Kind.ACCOUNT)
        link = LocalConnectObject.objects.create(
            id=secrets.token_urlsafe(32),
            kind=LocalConnectObject.Kind.ACCOUNT_LINK,
            account_id=account_id,
            status="open",
            data={"return_url": return_url, "refresh_url": refresh_url},
            expires_at=timezone.now() + CHECKOUT_LIFETIME,
        )
        return onboarding_url(link.id)

    @transaction.atomic
    def complete_onboarding(
        self, *, link_id: str, display_name: str, bank_account: str
    ) -> tuple[ProviderAccount, SignedEvent]:
        """The owner submitted the hosted onboarding page: the account is active; builds `account.updated`."""
        link = LocalConnectObject.objects.select_for_update().filter(id=link_id, kind="account_link").first()
        if link is None or link.status != "open" or link.expires_at <= timezone.now():
            raise ProviderError("This onboarding link is used or expired; start onboarding again.")
        row = self._connect_row(link.account_id, LocalConnectObject.Kind.ACCOUNT, lock=True)
        row.status = PayoutAccountStatus.ACTIVE
        row.data = {**row.data, "display_name": display_name, "bank_last4": bank_account[-4:]}
        row.save(update_fields=["status", "data", "updated_at"])
        link.status = "completed"
        link.save(update_fields=["status", "updated_at"])
        return _account(row), build_event("account.updated", account_event_object(row))

    @transaction.atomic
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
        """From the platform's balance to the account's, which the platform's balance must cover."""
        currency = normalise_currency(currency)
        minor = to_minor(amount, currency)
        self._connect_row(account_id, LocalConnectObject.Kind.ACCOUNT, lock=True)  # one create at a time per account
        new_id = provider_id("tr")
        if not LocalConnectObject.objects.filter(idempotency_key=idempotency_key).exists():
            local_balance.require_funds("", currency, minor, what="a transfer")
        row = _create_once(
            LocalConnectObject,
            idempotency_key,
            id=new_id,
            kind=LocalConnectObject.Kind.TRANSFER,
            account_id=account_id,
            target_id=source_payment_id,
            amount_minor=minor,
            currency=currency,
            status="paid",
            data={"transfer_group": transfer_group, "metadata": _metadata(metadata), "amount_reversed": 0},
        )
        _same_parameters(row, idempotency_key, account_id=account_id, amount_minor=minor)
        if row.id == new_id:
            for account, sign in (("", -1), (account_id, 1)):
                local_balance.book(
                    account=account, type="transfer", amount_minor=sign * minor, currency=currency, source=row.id
                )
        return _transfer(row)

    @transaction.atomic
    def reverse_transfer(self, *, transfer_id: str, amount: Decimal, idempotency_key: str) -> Transfer:
        """Back from the account's balance to the platform's; the account's balance must cover it (Stripe
        reverses a separate charge's transfer only then)."""
        transfer = self._connect_row(transfer_id, LocalConnectObject.Kind.TRANSFER, lock=True)
        minor = to_minor(amount, transfer.currency)
        reversal = _create_once(
            LocalConnectObject,
            idempotency_key,
            id=provider_id("trr"),
            kind=LocalConnectObject.Kind.REVERSAL,
            target_id=transfer_id,
            amount_minor=minor,
            currency=transfer.currency,
            status="pending",
        )
        _same_parameters(reversal, idempotency_key, target_id=transfer_id, amount_minor=minor)
        if reversal.status != "succeeded":
            reversed_so_far = int(transfer.data.get("amount_reversed", 0))
            if reversed_so_far + minor > transfer.amount_minor:
                raise ProviderError(f"Reversal of {amount} exceeds what is left of transfer {transfer_id}.")
            local_balance.require_funds(transfer.account_id, transfer.currency, minor, what="a reversal")
            transfer.data = {**transfer.data, "amount_reversed": reversed_so_far + minor}
            transfer.save(update_fields=["data", "updated_at"])
            LocalConnectObject.objects.filter(pk=reversal.pk).update(status="succeeded")
            for account, sign in (("", 1), (transfer.account_id, -1)):
                local_balance.book(
                    account=account,
                    type="transfer_reversal",
                    amount_minor=sign * minor,
                    currency=transfer.currency,
                    source=reversal.id,
                )
        return dataclasses.replace(_transfer(transfer), reversal_id=reversal.id)

    @transaction.atomic
    def create_payout(
        self, *, account_id: str, amount: Decimal, currency: str, metadata: dict[str, str], idempotency_key: str
    ) -> ProviderPayout:
        """The local provider pays at once: the payout is recorded `paid` (see docs/payouts.md), out of the
        account's balance, which must cover it."""
        currency = normalise_currency(currency)
        minor = to_minor(amount, currency)
        account = self._connect_row(account_id, LocalConnectObject.Kind.ACCOUNT, lock=True)
        existing = LocalConnectObject.objects.filter(idempotency_key=idempotency_key).first()
        if existing is None:
            if account.status != PayoutAccountStatus.ACTIVE:
                raise ProviderError(f"Account {account_id} cannot be paid out yet: it is {account.status}.")
            local_balance.require_funds(account_id, currency, minor, what="a payout")
        new_id = provider_id("po")
        row = _create_once(
            LocalConnectObject,
            idempotency_key,
            id=new_id,
            kind=LocalConnectObject.Kind.PAYOUT,
            account_id=account_id,
            amount_minor=minor,
            currency=currency,
            status="paid",
            data={"metadata": _metadata(metadata)},
        )
        _same_parameters(row, idempotency_key, account_id=account_id, amount_minor=minor)
        if row.id == new_id:
            local_balance.book(account=account_id, type="payout", amount_minor=-minor, currency=currency, source=row.id)
        return _payout(row)

    # --- Looking objects up: a retry after the key expired finds what the first attempt made ----

    def find_transfer(self, *, transfer_group: str, metadata_key: str, metadata_value: str) -> Transfer | None:
        rows = LocalConnectObject.objects.filter(
            kind=LocalConnectObject.Kind.TRANSFER, data__transfer_group=transfer_group
        ).order_by("created_at")
        for row in rows.iterator():
            if row.data.get("metadata", {}).get(metadata_key) == metadata_value:
                return _transfer(row)
        return None

    def find_payout(self, *, account_id: str, payout_id: str) -> ProviderPayout | None:
        rows = LocalConnectObject.objects.filter(kind=LocalConnectObject.Kind.PAYOUT, account_id=account_id)
        row = rows.filter(data__metadata__payout_id=payout_id).order_by("created_at").first()
        return _payout(row) if row is not None else None

    def find_refund(self, *, payment_id: str, idempotency_key: str) -> Refund | None:
        rows = LocalConnectObject.objects.filter(kind=LocalConnectObject.Kind.REFUND, target_id=payment_id)
        row = rows.filter(data__metadata__operation=idempotency_key).order_by("created_at").first()
        return _refund(row) if row is not None else None

    # --- Balances -------------------------------------------------------------------------------

    def balance(self, *, account_id: str = "") -> dict[str, Decimal]:
        return local_balance.balance(account_id)

    def balance_transactions(
        self, *, account_id: str = "", created_after: datetime | None = None
    ) -> Iterator[BalanceTransaction]:
        return local_balance.transactions(account_id, created_after)

    # --- What happens at a provider outside our calls, each with the event it sends ------------

    @transaction.atomic
    def simulate_payout_failure(self, payout_id: str) -> tuple[ProviderPayout, SignedEvent]:
        """The bank sends a paid payout back (Stripe: some failed payouts first show as paid): the money
        returns to the account's balance; builds `payout.failed` (of the connected account)."""
        row = self._connect_row(payout_id, LocalConnectObject.Kind.PAYOUT, lock=True)
        if row.status != "failed":
            row.status = "failed"
            row.data = {**row.data, "failure_code": "account_closed", "failure_reason": "The bank account is closed."}
            row.save(update_fields=["status", "data", "updated_at"])
            local_balance.book(
                account=row.account_id,
                type="payout_failure",
                amount_minor=row.amount_minor,
                currency=row.currency,
                source=row.id,
            )
        return _payout(row), connected_event("payout.failed", payout_event_object(row), account=row.account_id)

    @transaction.atomic
    def simulate_dashboard_refund(self, payment_id: str, amount: Decimal) -> tuple[ProviderPayment, SignedEvent]:
        """Staff refund (part of) a payment in the provider's dashboard, not through us: builds
        `charge.refunded` (the charge with its refunds)."""
        row = self._payment_row(payment_id, lock=True)
        refund_id = provider_id("re")
        self._refund_once(row, to_minor(amount, row.currency), f"dashboard:{refund_id}", dashboard=True)
        return _payment(row), build_event("charge.refunded", charge_event_object(row))

    @transaction.atomic
    def simulate_dispute(self, payment_id: str, status: str) -> tuple[str, list[SignedEvent]]:
        """The cardholder's bank disputes a payment, or the dispute moves on: the dispute's id and the
        events, in Stripe's order. `needs_response` opens one and withdraws the amount plus the dispute fee
        (PAYMENTS_LOCAL_DISPUTE_FEE) from the platform's balance; `warning_needs_response` opens an inquiry,
        which withdraws nothing; a closing status closes the open dispute: `lost` keeps what was withdrawn
        (withdrawing it first if nothing was), any other gives the amount back (the fee is kept)."""
        if status not in DISPUTE_STATUSES:
            raise ValueError(f"status must be one of {', '.join(DISPUTE_STATUSES)}")
        row = self._payment_row(payment_id, lock=True)
        if not self._captured(row):
            raise ProviderError(f"Payment {payment_id} has no captured charge to dispute.")
        dispute = self._open_dispute(row)
        events: list[SignedEvent] = []
        if dispute is None:
            if status not in DISPUTE_OPEN:
                raise ProviderError(f"Payment {payment_id} has no open dispute to move to {status}.")
            dispute = self._new_dispute(row, status)
            events.append(build_event("charge.dispute.created", dispute_event_object(dispute)))
            if status == "needs_response":
                events.append(self._withdraw(dispute, row))
            return dispute.id, events
        if status in DISPUTE_OPEN:
            raise ProviderError(f"Payment {payment_id} already has an open dispute ({dispute.id}).")
        if status == "lost" and not dispute.data.get("withdrawn"):
            events.append(self._withdraw(dispute, row))
        if status in ("won", "prevented") and dispute.data.get("withdrawn") and not dispute.data.get("reinstated"):
            events.append(self._reinstate(dispute, row))
        dispute.status = "closed" if status in DISPUTE_CLOSE else "open"
        dispute.data = {**dispute.data, "status": status}
        dispute.save(update_fields=["status", "data", "updated_at"])
        kind = "charge.dispute.closed" if status in DISPUTE_CLOSE else "charge.dispute.updated"
        events.append(build_event(kind, dispute_event_object(dispute)))
        return dispute.id, events

    def _open_dispute(self, row: LocalPayment) -> LocalConnectObject | None:
        disputes = LocalConnectObject.objects.select_for_update().filter(kind=DISPUTE, target_id=row.id)
        return disputes.filter(status="open").first()

    def _new_dispute(self, row: LocalPayment, status: str) -> LocalConnectObject:
        dispute_id = provider_id("dp")
        return LocalConnectObject.objects.create(
            id=dispute_id,
            idempotency_key=f"dispute:{dispute_id}",
            kind=DISPUTE,
            target_id=row.id,
            amount_minor=row.amount_minor - row.amount_refunded_minor,
            currency=row.currency,
            status="open",
            data={"status": status, "reason": "fraudulent", "withdrawn": False, "reinstated": False},
        )

    def _withdraw(self, dispute: LocalConnectObject, row: LocalPayment) -> SignedEvent:
        fee = dispute_fee_minor(dispute.currency)
        local_balance.book(
            account="",
            type="adjustment",
            amount_minor=-dispute.amount_minor,
            fee_minor=fee,
            currency=dispute.currency,
            source=dispute.id,
            group=local_balance.payment_group(row),
        )
        dispute.data = {**dispute.data, "withdrawn": True}
        dispute.save(update_fields=["data", "updated_at"])
        return build_event("charge.dispute.funds_withdrawn", dispute_event_object(dispute))

    def _reinstate(self, dispute: LocalConnectObject, row: LocalPayment) -> SignedEvent:
        local_balance.book(
            account="",
            type="adjustment",
            amount_minor=dispute.amount_minor,
            currency=dispute.currency,
            source=dispute.id,
            group=local_balance.payment_group(row),
        )
        dispute.data = {**dispute.data, "reinstated": True}
        dispute.save(update_fields=["data", "updated_at"])
        return build_event("charge.dispute.funds_reinstated", dispute_event_object(dispute))

    def _connect_row(self, object_id: str, kind: str, *, lock: bool = False) -> LocalConnectObject:
        rows = LocalConnectObject.objects.select_for_update() if lock else LocalConnectObject.objects
        row = rows.filter(id=object_id, kind=kind).first()
        if row is None:
            raise ProviderError(f"No such {kind}: {object_id!r}.")
        return row

    # --- Subscriptions --------------------------------------------------------------------------

    @transaction.atomic
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
        if not plan:
            raise ProviderError("A plan is required.")
        now = timezone.now()
        row = _create_once(
            LocalSubscription,
            idempotency_key,
            id=provider_id("sub"),
            customer_email=customer_email,
            plan=plan,
            status=SubscriptionStatus.ACTIVE,
            current_period_start=now,
            current_period_end=now + PERIOD,
            metadata=_metadata(metadata),
        )
        _same_parameters(row, idempotency_key, customer_email=customer_email, plan=plan)
        if not LocalCheckoutSession.objects.filter(subscription=row).exists():  # a retry keeps the first page
            _open_checkout(subscription=row, payee=DEFAULT_PAYEE, success_url=success_url, cancel_url=cancel_url)
        return _subscription(row)

    def get_subscription(self, subscription_id: str) -> ProviderSubscription:
        return _subscription(self._subscription_row(subscription_id))

    @transaction.atomic
    def set_cancel_at_period_end(
        self, subscription_id: str, cancel: bool, *, idempotency_key: str | None = None
    ) -> ProviderSubscription:
        # Setting the flag again is the same request, so a retry needs nothing of the key here.
        row = self._subscription_row(subscription_id, lock=True)
        if row.status == SubscriptionStatus.CANCELED:
            raise ProviderError(f"Subscription {subscription_id} is canceled and cannot be changed.")
        row.cancel_at_period_end = bool(cancel)
        row.save(update_fields=["cancel_at_period_end", "updated_at"])
        return _subscription(row)

    @transaction.atomic
    def set_collection_paused(
        self, subscription_id: str, paused: bool, *, idempotency_key: str
    ) -> ProviderSubscription:
        # As Stripe's pause_collection {behavior: void}: recorded on the row; setting it again changes nothing.
        row = self._subscription_row(subscription_id, lock=True)
        if row.status == SubscriptionStatus.CANCELED:
            raise ProviderError(f"Subscription {subscription_id} is canceled and cannot be changed.")
        row.collection_paused = bool(paused)
        row.save(update_fields=["collection_paused", "updated_at"])
        return _subscription(row)

    @transaction.atomic
    def simulate_subscription(self, subscription_id: str, outcome: str) -> tuple[ProviderSubscription, SignedEvent]:
        """Billing happens: an invoice is paid or fails, or the subscription ends; build the event.

        `paid` starts a new 30-day period when the current one is over; `updated` only re-announces
        the current state (as the provider does after cancel_at_period_end changes).
        """
        if outcome not in SUBSCRIPTION_OUTCOMES:
            raise ValueError(f"outcome must be one of {', '.join(SUBSCRIPTION_OUTCOMES)}")
        row = self._subscription_row(subscription_id, lock=True)
        if row.status == SubscriptionStatus.CANCELED and outcome != "updated":
            raise ProviderError(f"Subscription {subscription_id} is canceled.")
        now = timezone.now()
        if outcome == "paid":
            if row.current_period_end <= now:
                row.current_period_start, row.current_period_end = now, now + PERIOD
            row.status = SubscriptionStatus.ACTIVE
            event = ("invoice.paid", True)
        elif outcome == "payment_failed":
            row.status = SubscriptionStatus.PAST_DUE
            event = ("invoice.payment_failed", False)
        elif outcome == "deleted":
            row.status = SubscriptionStatus.CANCELED
            event = ("customer.subscription.deleted", None)
        else:
            event = ("customer.subscription.updated", None)
        row.save()
        event_type, paid = event
        obj = invoice_event_object(row, paid=paid) if paid is not None else subscription_event_object(row)
        return _subscription(row), build_event(event_type, obj)

    def _subscription_row(self, subscription_id: str, *, lock: bool = False) -> LocalSubscription:
        rows = LocalSubscription.objects.select_for_update() if lock else LocalSubscription.objects
        row = rows.filter(id=subscription_id).first()
        if row is None:
            raise ProviderError(f"No such subscription: {subscription_id!r}.")
        return row
