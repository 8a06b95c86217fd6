"""The payment provider interface that teams and tasks code against.

Amounts are Decimals in major units ("49.00 usd"); each provider converts to what it speaks.
Creates take an `idempotency_key` derived from the domain operation (e.g. `bid-select:<bid id>:<n>`):
the same key answers with the same provider object, however often the create is retried (a timeout,
a crash before the result was recorded, a concurrent duplicate), and never makes a second one.
Failures are `core.http.errors.ProviderError` (the provider answered and refused or failed the call)
or `core.http.errors.ProviderUnavailable` (not configured, unreachable, timed out).

What a provider answers is named apart from our models (`ProviderPayment`, `ProviderPayout`,
`ProviderAccount`, `ProviderSubscription`): a `Payment` or a `Payout` is always our record of it.
"""

from __future__ import annotations

from collections.abc import Iterator
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
class ProviderPayment:
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
class ProviderAccount:
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
    reversal_id: str = ""  # answering `reverse_transfer`: the reversal just made ("trr_..."), the ledger's provider_ref


@dataclass(frozen=True)
class ProviderPayout:
    """Money sent from a payout account to the owner's bank ("po_...")."""

    id: str
    account_id: str
    amount: Decimal  # major units
    currency: str
    status: str  # "pending" | "paid" | "failed"
    failure_reason: str = ""
    metadata: dict[str, str] = field(default_factory=dict)


@dataclass(frozen=True)
class Refund:
    """Money given back to the payer of a payment ("re_..."), whole or in part."""

    id: str
    payment_id: str  # the payment intent ("pi_...")
    amount: Decimal  # major units
    currency: str
    status: str  # "pending" | "succeeded" | "failed" | "canceled"
    metadata: dict[str, str] = field(default_factory=dict)  # `operation`: the idempotency key it was made with


@dataclass(frozen=True)
class BalanceTransaction:
    """One movement of an account's balance at the provider, as Stripe's balance transactions say it:
    `amount` gross (signed: + in, - out), `fee` the provider's (what it kept), `net` = amount - fee, in
    major units. `source` is the provider object that moved the money, named as our ledger's
    `provider_ref` names it: the payment intent (`pi_`) for a charge, `re_` for a refund, `tr_` for a
    transfer (on both sides), `trr_` for a reversal, `po_` for a payout and its failure, the dispute's id
    for a dispute's withdrawal and reinstatement. `group` is the transfer group of the payment the money
    belongs to (`task:<id>`), "" when the provider knows none (a subscription, a credit top-up)."""

    id: str
    type: str  # charge, refund, transfer, transfer_reversal, payout, payout_failure, adjustment (a dispute) ...
    amount: Decimal
    fee: Decimal
    net: Decimal
    currency: str
    source: str
    created: datetime  # aware, UTC
    group: str = ""
    payment_id: str = ""  # the payment intent a refund or a dispute concerns, when the provider names it


@dataclass(frozen=True)
class ProviderSubscription:
    id: str  # "sub_..."
    status: str  # SubscriptionStatus
    cancel_at_period_end: bool
    current_period_end: datetime  # aware, UTC
    metadata: dict[str, str] = field(default_factory=dict)
    checkout_url: str = ""  # a hosted page where the customer pays the first invoice, when the provider has one
    collection_paused: bool = False  # no invoice is collected while the team is paused (Stripe's pause_collection)


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
    ) -> ProviderPayment:
        """A payment intent with a hosted checkout page (`checkout_url`) showing `description` and `payee`.

        `idempotency_key` is derived from the domain operation: a retry with the same key creates nothing new.
        The page links back to `success_url` after paying and to `cancel_url` after declining (both optional).
        """
        ...

    def get_payment(self, payment_id: str) -> ProviderPayment: ...

    def cancel_payment(self, payment_id: str) -> ProviderPayment: ...

    def release_payment(self, payment_id: str) -> ProviderPayment:
        """Capture the secured money / pay it out (a task's delivery was approved)."""
        ...

    def refund_payment(self, payment_id: str) -> ProviderPayment:
        """Refund what is left of a payment, under the key `refund:<payment id>` (its `metadata[operation]`)."""
        ...

    # --- Paying sellers (docs/payouts.md). Task payments are captured when paid; a seller's share
    # moves later, by a transfer to the seller's payout account. Every create takes an idempotency key
    # derived from the domain operation, as above.

    def create_payout_account(
        self, *, email: str, country: str, metadata: dict[str, str], idempotency_key: str
    ) -> ProviderAccount:
        """An account the seller onboards (Stripe: `POST /v1/accounts`, type express)."""
        ...

    def get_payout_account(self, account_id: str) -> ProviderAccount: ...

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
        metadata: dict[str, str],
        idempotency_key: str,
        source_payment_id: str = "",
    ) -> Transfer:
        """Move money from the platform's balance to a payout account (Stripe: `POST /v1/transfers`). With
        `source_payment_id`, out of that payment's charge (`source_transaction`, so it can run before the
        charge settles); without, out of the platform's balance, which must hold it (a payout's transfer)."""
        ...

    def reverse_transfer(self, *, transfer_id: str, amount: Decimal, idempotency_key: str) -> Transfer:
        """Take back (part of) a transfer, e.g. for a refund after release (Stripe: transfer reversal)."""
        ...

    def refund_payment_partially(self, *, payment_id: str, amount: Decimal, idempotency_key: str) -> ProviderPayment:
        """Refund part of a captured payment (a dispute split); the full amount refunds it all. The refund
        carries `metadata[operation]` = `idempotency_key`, so `find_refund` finds it after the key expired."""
        ...

    def create_payout(
        self, *, account_id: str, amount: Decimal, currency: str, metadata: dict[str, str], idempotency_key: str
    ) -> ProviderPayout:
        """Pay an account's available money to its bank. The local provider records it as paid; Stripe
        pays connected accounts out on their own schedule, so its adapter answers with the payout that
        the `payout.paid` / `payout.failed` events later settle."""
        ...

    # --- Looking objects up (docs/payouts.md): a provider forgets an idempotency key after about a day, so a
    # create retried later first looks for the object the first attempt may have made.

    def find_transfer(self, *, transfer_group: str, metadata_key: str, metadata_value: str) -> Transfer | None:
        """The transfer in `transfer_group` whose `metadata[metadata_key]` is `metadata_value`, or None
        (Stripe: `GET /v1/transfers?transfer_group=...`)."""
        ...

    def find_payout(self, *, account_id: str, payout_id: str) -> ProviderPayout | None:
        """The payout of `account_id` whose `metadata[payout_id]` is `payout_id` (our payout's id), or None
        (Stripe: `GET /v1/payouts` as the connected account, every page)."""
        ...

    def find_refund(self, *, payment_id: str, idempotency_key: str) -> Refund | None:
        """The refund of `payment_id` made under `idempotency_key` (its `metadata[operation]`), or None
        (Stripe: `GET /v1/refunds?payment_intent=...`). A whole refund (`refund_payment`) is made under
        `refund:<payment id>`."""
        ...

    # --- Balances (payments.reconcile compares them with the ledger's money group)

    def balance(self, *, account_id: str = "") -> dict[str, Decimal]:
        """The platform's balance (or a connected account's), by currency: available + pending, major units."""
        ...

    def balance_transactions(
        self, *, account_id: str = "", created_after: datetime | None = None
    ) -> Iterator[BalanceTransaction]:
        """Every movement of the platform's (or a connected account's) balance, created at or after
        `created_after` when given, page by page (never the whole history in memory)."""
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
    ) -> ProviderSubscription: ...

    def get_subscription(self, subscription_id: str) -> ProviderSubscription: ...

    def set_cancel_at_period_end(
        self, subscription_id: str, cancel: bool, *, idempotency_key: str | None = None
    ) -> ProviderSubscription:
        """Cancel at the end of the period, or take that back. `idempotency_key` (e.g. `team-cancel:<team id>`)
        makes a retried call the same request to the provider."""
        ...

    def set_collection_paused(
        self, subscription_id: str, paused: bool, *, idempotency_key: str
    ) -> ProviderSubscription:
        """Stop collecting the subscription's invoices (void them) while its team is paused, or collect again
        (docs/decisions.md#pausing-a-team-pauses-billing)."""
        ...
