"""The payment provider interface that teams and tasks code against.

Amounts are Decimals in major units ("49.00 usd"); each provider converts to what it speaks.
Creates take an `idempotency_key` derived from the domain operation (e.g. `bid-select:<bid id>:<n>`):
the same key answers with the same provider object, however often the create is retried (a timeout,
a crash before the result was recorded, a concurrent duplicate), and never makes a second one.
Failures are `core.errors.ProviderError` (the provider answered and refused or failed the call)
or `core.errors.ProviderUnavailable` (not configured, unreachable, timed out).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from datetime import datetime
from decimal import Decimal
from typing import Protocol


class PaymentStatus:
    """Our vocabulary for a payment (docs/decisions.md#states), whatever the provider calls it."""

    REQUIRES_PAYMENT = "requires_payment"
    SUCCEEDED = "succeeded"  # the money is secured (authorised), not yet paid out
    FAILED = "failed"
    CANCELLED = "cancelled"
    RELEASED = "released"  # captured / paid out on approval
    REFUNDED = "refunded"

    ALL = (REQUIRES_PAYMENT, SUCCEEDED, FAILED, CANCELLED, RELEASED, REFUNDED)


class SubscriptionStatus:
    """The provider's vocabulary for a subscription, which the teams app maps to team states."""

    ACTIVE = "active"
    PAST_DUE = "past_due"
    CANCELED = "canceled"
    INCOMPLETE = "incomplete"
    TRIALING = "trialing"
    UNPAID = "unpaid"

    ALL = (ACTIVE, PAST_DUE, CANCELED, INCOMPLETE, TRIALING, UNPAID)


@dataclass(frozen=True)
class Payment:
    """A provider payment intent."""

    id: str  # the provider's id, e.g. "pi_..."
    amount: Decimal  # major units, e.g. Decimal("49.00")
    currency: str  # ISO 4217, lower case, e.g. "usd"
    status: str  # PaymentStatus
    client_secret: str
    checkout_url: str  # empty when the client confirms with `client_secret` instead of a hosted page
    metadata: dict[str, str] = field(default_factory=dict)


class PayoutAccountStatus:
    """A seller's payout account (docs/payouts.md): onboarding until the provider can pay it."""

    ONBOARDING = "onboarding"
    ACTIVE = "active"
    RESTRICTED = "restricted"

    ALL = (ONBOARDING, ACTIVE, RESTRICTED)


@dataclass(frozen=True)
class PayoutAccount:
    """A seller's account at the provider (Stripe: a Connect Express account, "acct_...")."""

    id: str
    status: str  # PayoutAccountStatus
    payouts_enabled: bool
    display_name: str = ""  # what the owner entered, or the provider's business name
    metadata: dict[str, str] = field(default_factory=dict)


@dataclass(frozen=True)
class Transfer:
    """Money moved from the platform's balance to a payout account (Stripe: a transfer, "tr_...")."""

    id: str
    account_id: str
    amount: Decimal  # major units
    currency: str
    amount_reversed: Decimal = Decimal("0")
    metadata: dict[str, str] = field(default_factory=dict)


@dataclass(frozen=True)
class Payout:
    """Money sent from a payout account to the owner's bank ("po_...")."""

    id: str
    account_id: str
    amount: Decimal  # major units
    currency: str
    status: str  # "pending" | "paid" | "failed"
    failure_reason: str = ""


@dataclass(frozen=True)
class Subscription:
    id: str  # "sub_..."
    status: str  # SubscriptionStatus
    cancel_at_period_end: bool
    current_period_end: datetime  # aware, UTC
    metadata: dict[str, str] = field(default_factory=dict)
    checkout_url: str = ""  # a hosted page where the customer pays the first invoice, when the provider has one


class PaymentProvider(Protocol):
    name: str  # "local" | "stripe"

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
        """A payment intent with a hosted checkout page (`checkout_url`) showing `description` and `payee`.

        `idempotency_key` is derived from the domain operation: a retry with the same key creates nothing new.
        The page links back to `success_url` after paying and to `cancel_url` after declining (both optional).
        """
        ...

    def get_payment(self, payment_id: str) -> Payment: ...

    def cancel_payment(self, payment_id: str) -> Payment: ...

    def release_payment(self, payment_id: str) -> Payment:
        """Capture the secured money / pay it out (a task's delivery was approved)."""
        ...

    def refund_payment(self, payment_id: str) -> Payment: ...

    # --- Paying sellers (docs/payouts.md). Task payments are captured when paid; a seller's share
    # moves later, by a transfer to the seller's payout account. Every create takes an idempotency key
    # derived from the domain operation, as above.

    def create_payout_account(
        self, *, email: str, country: str, metadata: dict[str, str], idempotency_key: str
    ) -> PayoutAccount:
        """An account the seller onboards (Stripe: `POST /v1/accounts`, type express)."""
        ...

    def get_payout_account(self, account_id: str) -> PayoutAccount: ...

    def create_onboarding_link(self, *, account_id: str, return_url: str, refresh_url: str) -> str:
        """A URL of a hosted page where the seller completes onboarding (Stripe: an Account Link)."""
        ...

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
        """Move a seller's share of a captured payment (Stripe: `POST /v1/transfers` with
        `source_transaction` set to the payment's charge, so it can run before the charge settles)."""
        ...

    def reverse_transfer(self, *, transfer_id: str, amount: Decimal, idempotency_key: str) -> Transfer:
        """Take back (part of) a transfer, e.g. for a refund after release (Stripe: transfer reversal)."""
        ...

    def refund_payment_partially(self, *, payment_id: str, amount: Decimal, idempotency_key: str) -> Payment:
        """Refund part of a captured payment (a dispute split); the full amount refunds it all."""
        ...

    def create_payout(
        self, *, account_id: str, amount: Decimal, currency: str, metadata: dict[str, str], idempotency_key: str
    ) -> Payout:
        """Pay an account's available money to its bank. The local provider records it as paid; Stripe
        pays connected accounts out on their own schedule, so its adapter answers with the payout that
        the `payout.paid` / `payout.failed` events later settle."""
        ...

    def create_subscription(
        self,
        *,
        customer_email: str,
        plan: str,
        metadata: dict[str, str],
        idempotency_key: str,
        success_url: str = "",
        cancel_url: str = "",
    ) -> Subscription: ...

    def get_subscription(self, subscription_id: str) -> Subscription: ...

    def set_cancel_at_period_end(
        self, subscription_id: str, cancel: bool, *, idempotency_key: str | None = None
    ) -> Subscription:
        """Cancel at the end of the period, or take that back. `idempotency_key` (e.g. `team-cancel:<team id>`)
        makes a retried call the same request to the provider."""
        ...
