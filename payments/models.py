"""Money moving through a provider: the `local` provider's own state (payments.providers.local), as a real
provider would hold it; what buyers pay (`Payment`); paying sellers (payout accounts, earnings, payouts, the
ledger).

Tables keep the names they had where their models lived before (`core` for the local provider's,
`tasks_market` for payments; docs/architecture.md#payments): a move changes where the code lives, not where
the rows are.
"""

from __future__ import annotations

import uuid

from django.conf import settings
from django.db import models

from payments.fees import FeeTerms


class LocalPayment(models.Model):
    """A payment intent held by the local payment provider, as a real provider would hold it."""

    class Status(models.TextChoices):
        REQUIRES_PAYMENT = "requires_payment", "Requires payment"
        SUCCEEDED = "succeeded", "Succeeded"
        FAILED = "failed", "Failed"
        CANCELLED = "cancelled", "Cancelled"
        RELEASED = "released", "Released"
        REFUNDED = "refunded", "Refunded"

    id = models.CharField(primary_key=True, max_length=40, editable=False)  # pi_...
    # The caller's key for the create: the same key answers with this row again (Stripe's Idempotency-Key).
    idempotency_key = models.CharField(max_length=255, unique=True, null=True, blank=True, editable=False)
    amount_minor = models.BigIntegerField(help_text="In the currency's minor unit (cents).")
    currency = models.CharField(max_length=3)
    status = models.CharField(max_length=20, choices=Status.choices, default=Status.REQUIRES_PAYMENT)
    client_secret = models.CharField(max_length=100)
    description = models.CharField(max_length=500, blank=True)
    metadata = models.JSONField(default=dict, blank=True)
    amount_refunded_minor = models.BigIntegerField(default=0, help_text="Refunded so far (partial refunds).")
    created_at = models.DateTimeField(auto_now_add=True)
    updated_at = models.DateTimeField(auto_now=True)

    class Meta:
        db_table = "core_localpayment"
        ordering = ["-created_at"]

    def __str__(self) -> str:
        return f"{self.id} {self.amount_minor} {self.currency} {self.status}"


class LocalSubscription(models.Model):
    """A subscription held by the local payment provider; periods last 30 days."""

    id = models.CharField(primary_key=True, max_length=40, editable=False)  # sub_...
    idempotency_key = models.CharField(max_length=255, unique=True, null=True, blank=True, editable=False)
    customer_email = models.EmailField()
    plan = models.CharField(max_length=100)
    status = models.CharField(max_length=20, default="active")
    cancel_at_period_end = models.BooleanField(default=False)
    # Stripe's pause_collection {behavior: void}: its team is paused, no invoice is collected.
    collection_paused = models.BooleanField(default=False, db_default=False)
    current_period_start = models.DateTimeField()
    current_period_end = models.DateTimeField()
    metadata = models.JSONField(default=dict, blank=True)
    created_at = models.DateTimeField(auto_now_add=True)
    updated_at = models.DateTimeField(auto_now=True)

    class Meta:
        db_table = "core_localsubscription"
        ordering = ["-created_at"]

    def __str__(self) -> str:
        return f"{self.id} {self.plan} {self.status}"


class LocalCheckoutSession(models.Model):
    """A hosted checkout page of the local provider (`/checkout/{id}`): the id is the capability.

    One session per payment or subscription; it is used once (paid or declined), or it expires, or its
    payment was cancelled meanwhile. Exactly one of `payment` / `subscription` is set.
    """

    class Status(models.TextChoices):
        OPEN = "open", "Open"
        COMPLETED = "completed", "Completed"  # paid or declined: used

    id = models.CharField(primary_key=True, max_length=64, editable=False)  # secrets.token_urlsafe(32)
    payment = models.OneToOneField(
        LocalPayment, null=True, blank=True, on_delete=models.CASCADE, related_name="checkout_session"
    )
    subscription = models.ForeignKey(
        LocalSubscription, null=True, blank=True, on_delete=models.CASCADE, related_name="checkout_sessions"
    )
    status = models.CharField(max_length=20, choices=Status.choices, default=Status.OPEN)
    outcome = models.CharField(
        max_length=20, blank=True, help_text="What the payer chose: paid, declined, card_declined."
    )
    payee = models.CharField(max_length=200, blank=True, help_text="Who receives the money, as the page shows it.")
    success_url = models.URLField(max_length=2000, blank=True)
    cancel_url = models.URLField(max_length=2000, blank=True)
    expires_at = models.DateTimeField()
    completed_at = models.DateTimeField(null=True, blank=True)
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        db_table = "core_localcheckoutsession"
        ordering = ["-created_at"]
        constraints = [
            models.CheckConstraint(
                condition=models.Q(payment__isnull=False, subscription__isnull=True)
                | models.Q(payment__isnull=True, subscription__isnull=False),
                name="checkout_session_has_one_object",
            )
        ]

    def __str__(self) -> str:
        return f"checkout {self.payment_id or self.subscription_id} {self.status}"


class LocalConnectObject(models.Model):
    """The local provider's paying-sellers objects (docs/payouts.md): payout accounts, onboarding links,
    transfers, reversals, partial refunds and payouts, one table since each is a few fields and an
    idempotency key. `data` holds what a kind needs beyond the common columns (e.g. the bank account)."""

    class Kind(models.TextChoices):
        ACCOUNT = "account", "Payout account"
        ACCOUNT_LINK = "account_link", "Onboarding link"
        TRANSFER = "transfer", "Transfer"
        REVERSAL = "reversal", "Transfer reversal"
        REFUND = "refund", "Partial refund"
        PAYOUT = "payout", "Payout"

    id = models.CharField(primary_key=True, max_length=64, editable=False)  # acct_, tr_, trr_, re_, po_ ...
    idempotency_key = models.CharField(max_length=255, unique=True, null=True, blank=True, editable=False)
    kind = models.CharField(max_length=20, choices=Kind.choices)
    account_id = models.CharField(max_length=64, blank=True)  # the account, or the transfer a reversal undoes
    target_id = models.CharField(max_length=64, blank=True)  # a transfer's payment, a reversal's transfer
    amount_minor = models.BigIntegerField(default=0)
    currency = models.CharField(max_length=3, blank=True)
    status = models.CharField(max_length=20, blank=True)
    data = models.JSONField(default=dict, blank=True)
    expires_at = models.DateTimeField(null=True, blank=True)
    created_at = models.DateTimeField(auto_now_add=True)
    updated_at = models.DateTimeField(auto_now=True)

    class Meta:
        ordering = ["-created_at"]
        indexes = [models.Index(fields=["kind", "target_id"])]

    def __str__(self) -> str:
        return f"{self.kind} {self.id} {self.status}"


class LocalBalanceTransaction(models.Model):
    """One movement of a balance at the local provider, as Stripe's balance transactions: the platform's
    (`account` "") or a connected account's (`acct_...`). Written in the same transaction as the object that
    moved the money (a capture, refund, transfer, reversal, payout, a payout failing, a dispute), so a
    balance is the sum of its rows; payments.reconcile compares them with the ledger's money group."""

    id = models.CharField(primary_key=True, max_length=64, editable=False)  # txn_...
    account = models.CharField(max_length=64, blank=True, help_text='"" = the platform, else acct_...')
    type = models.CharField(max_length=30)  # charge, refund, transfer, transfer_reversal, payout, adjustment ...
    amount_minor = models.BigIntegerField(help_text="Gross, signed: + into the balance, - out of it.")
    fee_minor = models.BigIntegerField(default=0, help_text="What the provider kept (a dispute fee).")
    net_minor = models.BigIntegerField(help_text="amount - fee: what the balance moved.")
    currency = models.CharField(max_length=3)
    source = models.CharField(max_length=64, db_index=True, help_text="pi_, re_, tr_, trr_, po_, dp_ ...")
    group = models.CharField(max_length=80, blank=True, help_text="The payment's transfer group (task:<uuid>).")
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        ordering = ["created_at", "id"]
        indexes = [models.Index(fields=["account", "created_at"])]

    def __str__(self) -> str:
        return f"{self.account or 'platform'} {self.type} {self.net_minor} {self.currency}"


# --- What buyers pay (docs/payouts.md#payments). A payment pays for a `source` (e.g. task:<uuid>) of an app
# that reacts to its money through payments.registry; payments knows nothing else of it.


class PaymentStatus(models.TextChoices):
    """The provider-neutral vocabulary of payments.providers.PaymentStatus (docs/decisions.md#states), spelled
    out: the providers' package imports these models."""

    REQUIRES_PAYMENT = "requires_payment", "Requires payment"
    SUCCEEDED = "succeeded", "Succeeded"  # secured, not paid out yet
    FAILED = "failed", "Failed"
    CANCELLED = "cancelled", "Cancelled"
    RELEASED = "released", "Released"  # paid out on approval
    REFUNDED = "refunded", "Refunded"


class Payment(models.Model):
    """Our record of one provider payment: `payer` pays `payee` for `source`, at the price agreed in
    `reference` (task:<uuid> and bid:<uuid> for the marketplace)."""

    id = models.UUIDField(primary_key=True, default=uuid.uuid4, editable=False)
    source = models.CharField(max_length=80, help_text="What is paid for, e.g. task:<uuid>.")
    reference = models.CharField(max_length=80, help_text="The offer the amount was agreed in, e.g. bid:<uuid>.")
    # PROTECT: money rows are never deleted, nor with either party (docs/decisions.md#money-rows-are-never-deleted).
    payer = models.ForeignKey(settings.AUTH_USER_MODEL, on_delete=models.PROTECT, related_name="payments_made")
    payee = models.ForeignKey(settings.AUTH_USER_MODEL, on_delete=models.PROTECT, related_name="payments_received")
    provider = models.CharField(max_length=20)
    provider_payment_id = models.CharField(max_length=255, unique=True)
    amount = models.DecimalField(max_digits=12, decimal_places=2)
    currency = models.CharField(max_length=3)
    status = models.CharField(max_length=20, choices=PaymentStatus.choices, default=PaymentStatus.REQUIRES_PAYMENT)
    client_secret = models.CharField(max_length=255, blank=True)
    checkout_url = models.URLField(max_length=2000, blank=True)
    created_at = models.DateTimeField(auto_now_add=True)
    updated_at = models.DateTimeField(auto_now=True)
    succeeded_at = models.DateTimeField(null=True, blank=True)
    released_at = models.DateTimeField(null=True, blank=True)
    mismatch_reason = models.CharField(
        max_length=500,
        blank=True,
        help_text="Why the last provider success event for this payment was refused (its amount or currency "
        "did not match); blank when none was.",
    )
    mismatch_event_id = models.CharField(max_length=255, blank=True, help_text="The refused event's id.")
    mismatch_at = models.DateTimeField(null=True, blank=True)
    refund_due_at = models.DateTimeField(
        null=True,
        blank=True,
        help_text="When a success arrived that nothing waited for any more (the task was cancelled, or another "
        "payment secured it): the refund is due, made outside the event's transaction; cleared once refunded "
        "or refused by the provider.",
    )
    # Null while the money is only authorised (payments held for approval before docs/payouts.md): the
    # beat captures those before their authorisation expires.
    captured_at = models.DateTimeField(null=True, blank=True)
    # db_default: during a rolling deploy the release before inserts payments without this column.
    refunded_amount = models.DecimalField(max_digits=12, decimal_places=2, default=0, db_default=0)
    # The fee terms the poster saw, pinned at selection (docs/decisions.md#the-fee-is-pinned-at-selection);
    # null on payments made before: today's settings apply to those.
    fee_percent = models.DecimalField(max_digits=6, decimal_places=3, null=True, blank=True)
    fee_minimum = models.DecimalField(max_digits=12, decimal_places=3, null=True, blank=True)

    class Meta:
        # The table kept the name it had before the model moved here (docs/decisions.md#one-money-app).
        db_table = "tasks_market_payment"
        ordering = ["-created_at"]
        indexes = [
            models.Index(fields=["source", "-created_at"], name="payment_source_created"),
            models.Index(fields=["reference"], name="payment_reference"),
            models.Index(
                fields=["refund_due_at"], condition=models.Q(refund_due_at__isnull=False), name="payment_refund_due"
            ),
            # The admin change list (docs/decisions.md#admin-change-lists-at-size).
            models.Index(fields=["-created_at", "-id"], name="payment_created_desc"),
        ]

    def __str__(self) -> str:
        return f"{self.provider_payment_id} {self.amount} {self.currency.upper()} ({self.status})"

    @property
    def source_id(self) -> str:
        """The id part of `source` (the task's id for task:<uuid>)."""
        return self.source.partition(":")[2]

    @property
    def reference_id(self) -> str:
        """The id part of `reference` (the bid's id for bid:<uuid>)."""
        return self.reference.partition(":")[2]

    @property
    def pinned_terms(self) -> FeeTerms | None:
        """The fee terms pinned at selection; None for a payment made before they were."""
        if self.fee_percent is None or self.fee_minimum is None:
            return None
        return FeeTerms(percent=self.fee_percent, minimum=self.fee_minimum)


# --- Paying sellers (docs/payouts.md). These rows belong to no domain app: `source` names what the
# money came from (`task:<uuid>`) as a string, so payments never imports the app that made it.


class PayoutAccount(models.Model):
    """A seller's account at the payment provider, which their net earnings are paid into."""

    class Status(models.TextChoices):
        ONBOARDING = "onboarding", "Onboarding"
        ACTIVE = "active", "Active"
        RESTRICTED = "restricted", "Restricted"

    id = models.UUIDField(primary_key=True, default=uuid.uuid4, editable=False)
    owner = models.OneToOneField(settings.AUTH_USER_MODEL, on_delete=models.PROTECT, related_name="payout_account")
    provider = models.CharField(max_length=20)
    provider_account_id = models.CharField(max_length=64, unique=True)
    status = models.CharField(max_length=20, choices=Status.choices, default=Status.ONBOARDING)
    payouts_enabled = models.BooleanField(default=False)
    country = models.CharField(
        max_length=2,
        default="US",
        db_default="US",
        help_text="ISO 3166-1 alpha-2: where the account is (its bank, its currency).",
    )
    display_name = models.CharField(max_length=200, blank=True)
    requirements = models.JSONField(default=list, blank=True, help_text="What the provider still needs.")
    created_at = models.DateTimeField(auto_now_add=True)
    updated_at = models.DateTimeField(auto_now=True)

    def __str__(self) -> str:
        return f"{self.provider_account_id} {self.status}"


class EarningStatus(models.TextChoices):
    PENDING = "pending", "Pending"  # released; the payment has not settled yet
    AVAILABLE = "available", "Available"  # settled: the next payout includes it
    PAID_OUT = "paid_out", "Paid out"
    FROZEN = "frozen", "Frozen"  # a card chargeback is open
    REVERSED = "reversed", "Reversed"  # the chargeback was lost


class ChargebackState(models.TextChoices):
    NONE = "", "None"
    FROZEN = "frozen", "Frozen (open, not paid out yet)"
    DEBITED = "debited", "Debited (open, was paid out)"
    WON = "won", "Won"
    LOST = "lost", "Lost"


class Chargeback(models.Model):
    """A card chargeback on a payment as the provider announced it (Stripe: a dispute), kept whether or
    not anything was released yet: an earning released after it opened is frozen at once
    (docs/payouts.md#chargebacks), so the events' order does not matter."""

    class Status(models.TextChoices):
        OPEN = "open", "Open"
        WON = "won", "Won (not lost: won, warning_closed or prevented)"
        LOST = "lost", "Lost"

    id = models.CharField(primary_key=True, max_length=64, help_text="The provider's dispute id (dp_...).")
    payment_ref = models.CharField(max_length=255, db_index=True, help_text="The provider's payment id.")
    status = models.CharField(max_length=20, choices=Status.choices, default=Status.OPEN)
    provider_status = models.CharField(
        max_length=40,
        blank=True,
        db_default="",
        help_text="The provider's last status (Stripe: warning_needs_response, needs_response, won, prevented ...).",
    )
    created_at = models.DateTimeField(auto_now_add=True)
    updated_at = models.DateTimeField(auto_now=True)

    def __str__(self) -> str:
        return f"chargeback {self.id} on {self.payment_ref} {self.status}"


class Earning(models.Model):
    """A seller's net share of one released payment (one per source: a task is released once)."""

    id = models.UUIDField(primary_key=True, default=uuid.uuid4, editable=False)
    owner = models.ForeignKey(settings.AUTH_USER_MODEL, on_delete=models.PROTECT, related_name="earnings")
    source = models.CharField(max_length=80, unique=True, help_text="What was paid for, e.g. task:<uuid>.")
    payment_ref = models.CharField(max_length=255, db_index=True, help_text="The provider's payment id.")
    provider = models.CharField(max_length=20)
    currency = models.CharField(max_length=3)
    gross = models.DecimalField(max_digits=14, decimal_places=3, help_text="The released amount (before the fee).")
    fee = models.DecimalField(max_digits=14, decimal_places=3)
    amount = models.DecimalField(max_digits=14, decimal_places=3, help_text="The seller's net: gross - fee.")
    status = models.CharField(max_length=20, choices=EarningStatus.choices, default=EarningStatus.PENDING)
    available_after = models.DateTimeField(help_text="When the payment counts as settled.")
    available_at = models.DateTimeField(null=True, blank=True)
    paid_out_at = models.DateTimeField(null=True, blank=True)
    payout = models.ForeignKey("payments.Payout", null=True, blank=True, on_delete=models.PROTECT)
    transfer_id = models.CharField(max_length=64, blank=True)
    reversed_amount = models.DecimalField(max_digits=14, decimal_places=3, default=0)
    chargeback_id = models.CharField(max_length=64, blank=True)
    chargeback_state = models.CharField(max_length=20, choices=ChargebackState.choices, blank=True, default="")
    frozen_from = models.CharField(max_length=20, blank=True, help_text="The status a chargeback froze.")
    created_at = models.DateTimeField(auto_now_add=True)
    updated_at = models.DateTimeField(auto_now=True)

    class Meta:
        ordering = ["-created_at"]
        indexes = [
            models.Index(fields=["owner", "-created_at", "-id"]),  # the seller's list (docs/decisions.md#lists)
            models.Index(fields=["status", "available_after"]),
        ]

    def __str__(self) -> str:
        return f"{self.source} {self.amount} {self.currency} {self.status}"

    @property
    def hold_reason(self) -> str:
        """Why the money is not paid out yet, for the seller (docs/payouts.md#the-holding-period): a code of
        HOLD_REASONS, "" once nothing holds it (paid out, or reversed)."""
        if self.status == EarningStatus.PENDING:
            return "holding_period"
        if self.status == EarningStatus.FROZEN:
            return "chargeback"
        if self.status == EarningStatus.AVAILABLE:
            return "next_payout"
        return ""


# What each Earning.hold_reason means, as the API explains it.
HOLD_REASONS = {
    "holding_period": "Held until available_at: the holding period after release (EARNING_HOLD_DAYS) absorbs "
    "chargebacks, and the payment settles.",
    "chargeback": "Held while a card chargeback on the payment is open.",
    "next_payout": "Available: the next scheduled payout pays it, once the payout account is active and the "
    "available balance is positive.",
}


class Payout(models.Model):
    """Available money paid from the platform to a seller's payout account."""

    class Status(models.TextChoices):
        PENDING = "pending", "Pending"  # claimed; the transfer and the payout are being made
        PAID = "paid", "Paid"
        FAILED = "failed", "Failed"  # refused at create, or failed (even after paid): its money is available again
        CANCELED = "canceled", "Canceled"  # canceled at the provider: as failed

    id = models.UUIDField(primary_key=True, default=uuid.uuid4, editable=False)
    owner = models.ForeignKey(settings.AUTH_USER_MODEL, on_delete=models.PROTECT, related_name="payouts")
    account = models.ForeignKey(PayoutAccount, on_delete=models.PROTECT, related_name="payouts")
    amount = models.DecimalField(max_digits=14, decimal_places=3)
    currency = models.CharField(max_length=3)
    status = models.CharField(max_length=20, choices=Status.choices, default=Status.PENDING)
    provider_payout_id = models.CharField(max_length=64, blank=True, db_index=True)
    # The transfer that moves the payout's money to the connected account first: the amount minus what
    # already sits there (docs/payouts.md#payouts), decided when the payout is claimed; 0: no transfer.
    transfer_amount = models.DecimalField(max_digits=14, decimal_places=3, default=0, db_default=0)
    transfer_id = models.CharField(max_length=64, blank=True, db_default="", db_index=True)
    idempotency_key = models.CharField(max_length=255, unique=True)
    failure_reason = models.CharField(max_length=500, blank=True)
    created_at = models.DateTimeField(auto_now_add=True)
    updated_at = models.DateTimeField(auto_now=True)
    paid_at = models.DateTimeField(null=True, blank=True)

    class Meta:
        ordering = ["-created_at"]
        indexes = [models.Index(fields=["owner", "-created_at", "-id"])]  # the seller's list (docs/decisions.md#lists)

    def __str__(self) -> str:
        return f"payout {self.amount} {self.currency} {self.status}"


class TransferReversal(models.Model):
    """Money taken back from a seller's connected account (docs/payouts.md#recovery): a recovery of a debt
    we made (claimed here first, then made at the provider with no lock held, under `key`), or a reversal
    made elsewhere (the dashboard) that a `transfer.reversed` event told us about."""

    class Status(models.TextChoices):
        PENDING = "pending", "Pending"  # claimed; the provider call is being made
        DONE = "done", "Done"
        FAILED = "failed", "Failed"

    class Origin(models.TextChoices):
        RECOVERY = "recovery", "Recovery of a debt"
        ELSEWHERE = "elsewhere", "Made elsewhere (the provider's dashboard)"

    id = models.UUIDField(primary_key=True, default=uuid.uuid4, editable=False)
    owner = models.ForeignKey(settings.AUTH_USER_MODEL, on_delete=models.PROTECT, related_name="+")
    currency = models.CharField(max_length=3)
    amount = models.DecimalField(max_digits=14, decimal_places=3)
    transfer_id = models.CharField(max_length=64, db_index=True, help_text="The transfer reversed (tr_...).")
    key = models.CharField(max_length=255, unique=True, help_text="The idempotency key (recovery:<debt>).")
    origin = models.CharField(max_length=20, choices=Origin.choices, default=Origin.RECOVERY)
    status = models.CharField(max_length=20, choices=Status.choices, default=Status.PENDING)
    failure_reason = models.CharField(max_length=500, blank=True)
    created_at = models.DateTimeField(auto_now_add=True)
    updated_at = models.DateTimeField(auto_now=True)

    class Meta:
        ordering = ["-created_at"]

    def __str__(self) -> str:
        return f"reversal {self.amount} {self.currency} of {self.transfer_id} {self.status}"


class LedgerEntry(models.Model):
    """One money movement (docs/payouts.md#the-ledger): its lines sum to zero per currency."""

    id = models.BigAutoField(primary_key=True)
    kind = models.CharField(max_length=40)  # captured, released, refunded, available, payout, chargeback ...
    source = models.CharField(max_length=80, db_index=True, help_text="task:<uuid>, payout:<uuid>, ...")
    # One entry per (kind, key): posting the same movement twice is a no-op, never a second entry.
    key = models.CharField(max_length=255, unique=True)
    memo = models.CharField(max_length=500, blank=True)
    provider_ref = models.CharField(
        max_length=255,
        blank=True,
        db_default="",
        db_index=True,
        help_text="The provider's object this movement is (tr_, po_, re_ ...).",
    )
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        ordering = ["id"]
        verbose_name_plural = "ledger entries"

    def __str__(self) -> str:
        return f"#{self.pk} {self.kind} {self.source}"


class LedgerLine(models.Model):
    """A debit (positive) or credit (negative) of one account in one currency."""

    id = models.BigAutoField(primary_key=True)
    entry = models.ForeignKey(LedgerEntry, on_delete=models.PROTECT, related_name="lines")
    account = models.CharField(max_length=120, db_index=True)  # platform:captured, seller:<user id>:available ...
    owner_id = models.CharField(max_length=64, blank=True, db_index=True, help_text="The seller, on seller lines.")
    source = models.CharField(max_length=80, db_index=True)  # the entry's, copied for per-task views
    currency = models.CharField(max_length=3)
    amount = models.DecimalField(max_digits=14, decimal_places=3, help_text="Debit > 0, credit < 0.")

    class Meta:
        ordering = ["entry_id", "id"]

    def __str__(self) -> str:
        return f"{self.account} {self.amount} {self.currency}"
