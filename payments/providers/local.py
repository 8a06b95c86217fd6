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

Creates are idempotent like Stripe's: the `idempotency_key` is a unique column, so the same key
answers with the same object (in its current state) and never makes a second row, even when two
creates with it race; reusing a key with different parameters is refused, as Stripe refuses it.
"""

from __future__ import annotations

import secrets
from datetime import UTC, timedelta
from decimal import Decimal
from typing import Any

from django.conf import settings
from django.db import IntegrityError, transaction
from django.urls import reverse
from django.utils import timezone

from core.errors import ProviderError
from payments.events import SignedEvent, build_event, provider_id
from payments.models import LocalCheckoutSession, LocalConnectObject, LocalPayment, LocalSubscription
from payments.money import from_minor, normalise_currency, to_minor
from payments.providers.base import (
    Payment,
    PaymentStatus,
    PayoutAccount,
    PayoutAccountStatus,
    Subscription,
    SubscriptionStatus,
    Transfer,
)
from payments.providers.base import Payout as ProviderPayout

PERIOD = timedelta(days=30)
# As long as Stripe keeps a Checkout Session open.
CHECKOUT_LIFETIME = timedelta(hours=24)
DEFAULT_PAYEE = "Brand Marketing and Task Platform"

PAYMENT_OUTCOMES = ("succeeded", "failed")
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


def _payment(row: LocalPayment) -> Payment:
    session_id = LocalCheckoutSession.objects.filter(payment=row).values_list("id", flat=True).first()
    return Payment(
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


def _account(row: LocalConnectObject) -> PayoutAccount:
    return PayoutAccount(
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


def _subscription(row: LocalSubscription) -> Subscription:
    session_id = (
        LocalCheckoutSession.objects.filter(subscription=row)
        .order_by("-created_at")
        .values_list("id", flat=True)
        .first()
    )
    return Subscription(
        id=row.id,
        status=row.status,
        cancel_at_period_end=row.cancel_at_period_end,
        current_period_end=row.current_period_end.astimezone(UTC),
        metadata=dict(row.metadata),
        checkout_url=checkout_url(session_id) if session_id else "",
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
    ) -> Payment:
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

    def get_payment(self, payment_id: str) -> Payment:
        return _payment(self._payment_row(payment_id))

    def cancel_payment(self, payment_id: str) -> Payment:
        return self._move(payment_id, PaymentStatus.CANCELLED, allowed_from=(PaymentStatus.REQUIRES_PAYMENT,))

    def release_payment(self, payment_id: str) -> Payment:
        return self._move(payment_id, PaymentStatus.RELEASED, allowed_from=(PaymentStatus.SUCCEEDED,))

    def refund_payment(self, payment_id: str) -> Payment:
        return self._move(
            payment_id, PaymentStatus.REFUNDED, allowed_from=(PaymentStatus.SUCCEEDED, PaymentStatus.RELEASED)
        )

    @transaction.atomic
    def refund_payment_partially(self, *, payment_id: str, amount: Decimal, idempotency_key: str) -> Payment:
        row = self._payment_row(payment_id, lock=True)
        minor = to_minor(amount, row.currency)
        refund = _create_once(
            LocalConnectObject,
            idempotency_key,
            id=provider_id("re"),
            kind=LocalConnectObject.Kind.REFUND,
            target_id=row.id,
            amount_minor=minor,
            currency=row.currency,
            status="pending",
        )
        _same_parameters(refund, idempotency_key, kind=LocalConnectObject.Kind.REFUND, target_id=row.id)
        if refund.status == "succeeded":
            return _payment(row)  # the same key again: already refunded
        if row.status not in (PaymentStatus.SUCCEEDED, PaymentStatus.RELEASED):
            raise ProviderError(f"Payment {payment_id} is {row.status} and cannot be refunded.")
        if row.amount_refunded_minor + minor > row.amount_minor:
            raise ProviderError(f"Refund of {amount} exceeds what is left of payment {payment_id}.")
        row.amount_refunded_minor += minor
        if row.amount_refunded_minor == row.amount_minor:
            row.status = PaymentStatus.REFUNDED
        row.save(update_fields=["amount_refunded_minor", "status", "updated_at"])
        LocalConnectObject.objects.filter(pk=refund.pk).update(status="succeeded")
        return _payment(row)

    @transaction.atomic
    def simulate_cancel(self, payment_id: str) -> tuple[Payment, SignedEvent]:
        """A held payment's authorisation expires: the provider cancels it (`payment_intent.canceled`)."""
        row = self._payment_row(payment_id, lock=True)
        if row.status not in (PaymentStatus.SUCCEEDED, PaymentStatus.REQUIRES_PAYMENT, PaymentStatus.CANCELLED):
            raise ProviderError(f"Payment {payment_id} is {row.status} and cannot expire.")
        row.status = PaymentStatus.CANCELLED
        row.save(update_fields=["status", "updated_at"])
        obj = payment_event_object(row) | {"cancellation_reason": "automatic"}
        return _payment(row), build_event("payment_intent.canceled", obj)

    def simulate_payment(self, payment_id: str, outcome: str) -> tuple[Payment, SignedEvent]:
        """The customer pays (or the card is declined): settle the payment and build its event.

        Settling a payment already in that state again only builds a fresh event (to send again).
        """
        if outcome not in PAYMENT_OUTCOMES:
            raise ValueError(f"outcome must be one of {', '.join(PAYMENT_OUTCOMES)}")
        payment = self._move(payment_id, outcome, allowed_from=(PaymentStatus.REQUIRES_PAYMENT,))
        event_type = "payment_intent.succeeded" if outcome == "succeeded" else "payment_intent.payment_failed"
        return payment, build_event(event_type, payment_event_object(self._payment_row(payment_id)))

    def _payment_row(self, payment_id: str, *, lock: bool = False) -> LocalPayment:
        rows = LocalPayment.objects.select_for_update() if lock else LocalPayment.objects
        row = rows.filter(id=payment_id).first()
        if row is None:
            raise ProviderError(f"No such payment: {payment_id!r}.")
        return row

    @transaction.atomic
    def _move(self, payment_id: str, target: str, *, allowed_from: tuple[str, ...]) -> Payment:
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
    ) -> PayoutAccount:
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

    def get_payout_account(self, account_id: str) -> PayoutAccount:
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
    ) -> tuple[PayoutAccount, SignedEvent]:
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

    def create_transfer(
        self,
        *,
        account_id: str,
        amount: Decimal,
        currency: str,
        transfer_group: str,
        source_payment_id: str,
        metadata: dict[str, str],
        idempotency_key: str,
    ) -> Transfer:
        currency = normalise_currency(currency)
        self._connect_row(account_id, LocalConnectObject.Kind.ACCOUNT)
        row = _create_once(
            LocalConnectObject,
            idempotency_key,
            id=provider_id("tr"),
            kind=LocalConnectObject.Kind.TRANSFER,
            account_id=account_id,
            target_id=source_payment_id,
            amount_minor=to_minor(amount, currency),
            currency=currency,
            status="paid",
            data={"transfer_group": transfer_group, "metadata": _metadata(metadata), "amount_reversed": 0},
        )
        _same_parameters(row, idempotency_key, account_id=account_id, amount_minor=to_minor(amount, currency))
        return _transfer(row)

    @transaction.atomic
    def reverse_transfer(self, *, transfer_id: str, amount: Decimal, idempotency_key: str) -> Transfer:
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
            transfer.data = {**transfer.data, "amount_reversed": reversed_so_far + minor}
            transfer.save(update_fields=["data", "updated_at"])
            LocalConnectObject.objects.filter(pk=reversal.pk).update(status="succeeded")
        return _transfer(transfer)

    def create_payout(
        self, *, account_id: str, amount: Decimal, currency: str, metadata: dict[str, str], idempotency_key: str
    ) -> ProviderPayout:
        """The local provider pays at once: the payout is recorded `paid` (see docs/payouts.md)."""
        currency = normalise_currency(currency)
        account = self._connect_row(account_id, LocalConnectObject.Kind.ACCOUNT)
        if account.status != PayoutAccountStatus.ACTIVE:
            raise ProviderError(f"Account {account_id} cannot be paid out yet: it is {account.status}.")
        row = _create_once(
            LocalConnectObject,
            idempotency_key,
            id=provider_id("po"),
            kind=LocalConnectObject.Kind.PAYOUT,
            account_id=account_id,
            amount_minor=to_minor(amount, currency),
            currency=currency,
            status="paid",
            data={"metadata": _metadata(metadata)},
        )
        _same_parameters(row, idempotency_key, account_id=account_id, amount_minor=to_minor(amount, currency))
        return ProviderPayout(
            id=row.id,
            account_id=row.account_id,
            amount=from_minor(row.amount_minor, row.currency),
            currency=row.currency,
            status=row.status,
        )

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
    ) -> Subscription:
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

    def get_subscription(self, subscription_id: str) -> Subscription:
        return _subscription(self._subscription_row(subscription_id))

    @transaction.atomic
    def set_cancel_at_period_end(
        self, subscription_id: str, cancel: bool, *, idempotency_key: str | None = None
    ) -> Subscription:
        # Setting the flag again is the same request, so a retry needs nothing of the key here.
        row = self._subscription_row(subscription_id, lock=True)
        if row.status == SubscriptionStatus.CANCELED:
            raise ProviderError(f"Subscription {subscription_id} is canceled and cannot be changed.")
        row.cancel_at_period_end = bool(cancel)
        row.save(update_fields=["cancel_at_period_end", "updated_at"])
        return _subscription(row)

    @transaction.atomic
    def simulate_subscription(self, subscription_id: str, outcome: str) -> tuple[Subscription, SignedEvent]:
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
