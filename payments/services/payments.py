"""What buyers pay (docs/payouts.md#payments): a payment recorded once per provider payment, its money
captured, released to the seller or refunded, and the provider's events about it applied.

A payment pays for a source (`task:<uuid>`) whose app decides what the money means through
payments.registry (`PaymentSource`); this module moves the money and keeps the payment's record. Every
write takes the source's lock first, then the payment's (the order the source's own writers take them
in), and every provider call is made with no transaction open, under an idempotency key derived from the
payment or the decision it serves.

Events (docs/decisions.md#payments-webhook-inbound): the inbound layer has already dropped duplicates and
events older than one applied to the same payment; each function checks the current state and only moves
forward, so an event arriving twice or late changes nothing. A success is applied only when the event's
amount (minor units: `amount`, and `amount_received` when present) and currency are the payment's; a
mismatch is recorded on the payment (`mismatch_reason`, `mismatch_event_id`, `mismatch_at`), logged at
ERROR, applies nothing and raises PaymentMismatch after the record is written, so the webhook marks the
event `rejected`.
"""

from __future__ import annotations

import logging
from datetime import datetime, timedelta
from decimal import Decimal
from uuid import UUID

from django.conf import settings
from django.db import transaction
from django.utils import timezone

from core.http.errors import ProviderError, ProviderUnavailable
from core.ops.enqueue import enqueue_after_commit
from payments.fees import FeeTerms, fee_split
from payments.models import Earning, Payment, PaymentStatus
from payments.money import event_money_mismatch, from_minor, normalise_currency
from payments.providers import ProviderPayment, get_payment_provider
from payments.registry import payment_source
from payments.services.captures import ledger_captured, ledger_refunded, refund_once
from payments.services.earnings import earning_record
from payments.services.refunds import earning_reverse, earning_transfer_reverse

logger = logging.getLogger(__name__)

REFUND_DUE_TASK = "payments.tasks.refund_due_payment"
PAID = (PaymentStatus.SUCCEEDED, PaymentStatus.RELEASED, PaymentStatus.REFUNDED)


class PaymentMismatch(Exception):
    """A success event whose amount or currency is not the payment's; str(exc) is the reason."""


class RefundMismatch(Exception):
    """A refund event whose currency is not the payment's; str(exc) is the reason."""


def payment_locked(payment_pk: UUID | str, source: str = "") -> Payment:
    """Inside the caller's transaction: the payment's source locked first, then the payment. `source`: the
    payment's, when the caller has read it (it never changes), saving a query."""
    source = source or Payment.objects.values_list("source", flat=True).get(pk=payment_pk)
    payment_source(source).lock(source.partition(":")[2])
    return Payment.objects.select_for_update().get(pk=payment_pk)


def _locked_by_ref(provider_payment_id: str) -> Payment | None:
    found = Payment.objects.filter(provider_payment_id=provider_payment_id).values_list("pk", "source").first()
    return payment_locked(*found) if found is not None else None


# --- Recording


def payment_record(
    *,
    source: str,
    reference: str,
    payer_id,
    payee_id,
    provider: str,
    created: ProviderPayment,
    terms: FeeTerms,
) -> Payment:
    """Inside the caller's transaction, under the source's lock: our record of the provider's payment, with
    the fee terms the payer saw pinned (docs/decisions.md#the-fee-is-pinned-at-selection)."""
    return Payment.objects.create(
        source=source,
        reference=reference,
        payer_id=payer_id,
        payee_id=payee_id,
        provider=provider,
        provider_payment_id=created.id,
        amount=created.amount,
        currency=created.currency,
        status=created.status if created.status in PaymentStatus.values else PaymentStatus.REQUIRES_PAYMENT,
        client_secret=created.client_secret,
        checkout_url=created.checkout_url,
        fee_percent=terms.percent,
        fee_minimum=terms.minimum,
    )


def payment_record_capture(payment: Payment, now: datetime) -> None:
    """Under the payment's lock: its money is captured, once, and the ledger holds it."""
    if payment.captured_at is None:
        payment.captured_at = now
        payment.save(update_fields=["captured_at", "updated_at"])
        ledger_captured(
            source=payment.source,
            currency=payment.currency,
            amount=payment.amount,
            provider_ref=payment.provider_payment_id,
        )


def payment_capture_at_provider(payment: Payment) -> None:
    """Capture a payment still held for approval (made before payments were captured at once); nothing for
    one captured. A provider call, idempotent at both providers: with no transaction open."""
    if payment.captured_at is None:
        get_payment_provider().release_payment(payment.provider_payment_id)


def payment_release(payment: Payment, *, owner_id, now: datetime) -> None:
    """Under the payment's lock: what is left of the payment after any refund goes to the seller `owner_id`,
    as an earning (fee and net by payments.fees.fee_split, on the terms the payment pinned at selection),
    with its ledger lines; the payment is released."""
    payment_record_capture(payment, now)
    payment.status, payment.released_at = PaymentStatus.RELEASED, now
    payment.save(update_fields=["status", "released_at", "updated_at"])
    gross = payment.amount - payment.refunded_amount
    if gross > 0:
        terms = payment.pinned_terms
        earning_record(
            fee=fee_split(amount=gross, currency=payment.currency, terms=terms).fee if terms else None,
            owner_id=owner_id,
            source=payment.source,
            payment_ref=payment.provider_payment_id,
            provider=payment.provider,
            currency=payment.currency,
            gross=gross,
            now=now,
        )


def payment_cancel_waiting(payment: Payment) -> None:
    """Under the payment's lock: a payment that waited for the payer is cancelled (cancelled at the provider
    first by the caller, with no transaction open)."""
    if payment.status == PaymentStatus.REQUIRES_PAYMENT:
        payment.status = PaymentStatus.CANCELLED
        payment.save(update_fields=["status", "updated_at"])


def payment_cancel_abandoned(*, payment_id: UUID | str) -> Payment | None:
    """Cancel a payment still waiting for the payer that its source no longer awaits (the task was
    cancelled, or its selection given back, as an account closed): at the provider first, with no
    transaction open (cancelling is idempotent at both providers), then recorded under the source's lock.
    Safe to run twice. When the payer paid first the provider refuses; the success event refunds it."""
    payment = Payment.objects.filter(pk=payment_id).first()
    if payment is None or payment.status != PaymentStatus.REQUIRES_PAYMENT or _awaited(payment):
        return payment
    try:
        get_payment_provider().cancel_payment(payment.provider_payment_id)
    except ProviderError:
        logger.warning("abandoned payment %s could not be cancelled; paid, it is refunded", payment_id, exc_info=True)
        return payment
    with transaction.atomic():
        payment = payment_locked(payment.pk, payment.source)
        if not payment_source(payment.source).awaits(payment):
            payment_cancel_waiting(payment)
    return payment


def _awaited(payment: Payment) -> bool:
    with transaction.atomic():
        return payment_source(payment.source).awaits(payment_locked(payment.pk, payment.source))


# --- Refunds


def payment_refund_book(payment: Payment, *, upto: Decimal, key: str, provider_ref: str = "") -> None:
    """Under the payment's lock: the payment has `upto` refunded in all; the part our records do not hold yet
    (the provider's `charge.refunded` may have booked some first) leaves the ledger once, under `key`, when
    the money was captured or released (a held payment's refund only gives the authorisation back)."""
    missing = upto - payment.refunded_amount
    if missing <= 0:
        return
    # Released money was captured, whether or not its payment recorded when (released before captures were).
    if payment.captured_at is not None or payment.status == PaymentStatus.RELEASED:
        ledger_refunded(
            source=payment.source, currency=payment.currency, amount=missing, key=key, provider_ref=provider_ref
        )
    payment.refunded_amount = upto
    payment.save(update_fields=["refunded_amount", "updated_at"])


def payment_refund_whole(payment: Payment, *, key: str, provider_ref: str = "") -> None:
    """Under the payment's lock: all of it went back; the payment is `refunded`."""
    payment_refund_book(payment, upto=payment.amount, key=key, provider_ref=provider_ref)
    payment.status, payment.refund_due_at = PaymentStatus.REFUNDED, None
    payment.save(update_fields=["status", "refund_due_at", "updated_at"])


def payment_refund_at_provider(payment: Payment, *, amount: Decimal, key: str) -> str:
    """Refund `amount` of a secured payment (all of it: `amount` is the payment's), with no transaction open;
    a held payment is captured first when only part of it goes back. Answers the refund's id for the ledger
    ("" for none: a held payment's whole refund gives the authorisation back, no money moves)."""
    held = payment.captured_at is None
    if amount >= payment.amount:
        if held:
            get_payment_provider().refund_payment(payment.provider_payment_id)
            return ""
        return refund_once(payment_id=payment.provider_payment_id)
    if held:
        get_payment_provider().release_payment(payment.provider_payment_id)  # capture what is kept
    if amount > 0:
        return refund_once(payment_id=payment.provider_payment_id, amount=amount, idempotency_key=key)
    return ""


def payment_refund_mark_due(payment: Payment, *, job: bool = True) -> None:
    """Under the payment's lock: the payment is to be refunded in full by `payment_refund_due` once this
    transaction has committed (never from inside it: a provider call): by a job queued at commit, or, with
    `job=False`, by the caller right after its commit; by the sweep if neither gets to it."""
    payment.refund_due_at = timezone.now()
    payment.save(update_fields=["refund_due_at", "updated_at"])
    if job:
        enqueue_after_commit(REFUND_DUE_TASK, str(payment.pk))


def payment_refund_due(*, payment_id: UUID | str) -> Payment | None:
    """Make a due refund: the provider call with no transaction open (refunds are idempotent at both
    providers: Stripe's is keyed by the payment), then the record under the source's lock. Safe to run
    twice, concurrently too. A refund the provider refuses is left to staff (logged at ERROR, no longer
    due); one that cannot reach the provider stays due for the next sweep."""
    payment = Payment.objects.filter(pk=payment_id, refund_due_at__isnull=False).first()
    if payment is None:
        return None
    try:
        ref = refund_once(payment_id=payment.provider_payment_id)
    except ProviderError:  # refused: asking again cannot change that; staff decide
        logger.exception("refund of payment %s refused; needs attention", payment.provider_payment_id)
        Payment.objects.filter(pk=payment.pk).update(refund_due_at=None, updated_at=timezone.now())
        return payment
    with transaction.atomic():
        payment = payment_locked(payment.pk, payment.source)
        if payment.refund_due_at is not None:
            if payment.status == PaymentStatus.SUCCEEDED:  # a paid task cancelled: its money leaves the books
                payment_refund_whole(payment, key=f"cancel:{payment.pk}", provider_ref=ref)
            else:  # a success nothing waited for: no money was booked
                payment.status, payment.refund_due_at = PaymentStatus.REFUNDED, None
                payment.save(update_fields=["status", "refund_due_at", "updated_at"])
            logger.info("payment %s refunded", payment.provider_payment_id)
    return payment


def refunds_catch_up(*, older_than: timedelta = timedelta(minutes=5), limit: int = 100) -> int:
    """Sweep: make the refunds due for longer than `older_than` (their job was lost, or the provider was
    unreachable). Returns how many were tried."""
    cutoff = timezone.now() - older_than
    due = list(Payment.objects.filter(refund_due_at__lt=cutoff).values_list("id", flat=True)[:limit])
    for payment_id in due:
        try:
            payment_refund_due(payment_id=payment_id)
        except ProviderUnavailable:
            logger.warning("refund of payment %s still due: the provider is unavailable", payment_id)
    return len(due)


def payment_refund_after_release(*, source: str) -> Payment | None:
    """Staff: refund the payer in full after the payment was released (docs/payouts.md#refunds-after-release).

    With no lock held, the seller's transfer is reversed (when one was made and the money is not paid out
    yet) and the rest of the payment refunded, each keyed by the earning or the payment; then, under the
    source's lock and once, the earning is reversed (a paid-out one is debited from the owner's balance) and
    the refund written to the ledger. None when the source has no released payment."""
    payment = Payment.objects.filter(source=source, status__in=(PaymentStatus.RELEASED, PaymentStatus.REFUNDED)).first()
    if payment is None or payment.status == PaymentStatus.REFUNDED:
        return payment
    earning = Earning.objects.filter(source=source).first()
    if earning is not None and not earning.reversed_amount:
        earning_transfer_reverse(earning=earning)
    ref = refund_once(
        payment_id=payment.provider_payment_id,
        amount=payment.amount - payment.refunded_amount,
        idempotency_key=f"refund-after-release:{payment.pk}",
    )
    with transaction.atomic():
        payment = payment_locked(payment.pk, payment.source)
        if payment.status == PaymentStatus.REFUNDED:  # a twin recorded it
            return payment
        earning_reverse(source=source)
        payment_refund_whole(payment, key=f"after-release:{payment.pk}", provider_ref=ref)
        logger.warning("payment %s of %s refunded after release", payment.provider_payment_id, source)
    return payment


# --- The provider's events


def _uuid(value: object) -> UUID | None:
    try:
        return UUID(value) if isinstance(value, str) else None
    except ValueError:
        return None


def payment_link_intent(*, payment_intent_id: str, session_id: str = "", metadata: object = None) -> Payment | None:
    """Give the payment whose provider reference is still a checkout session (`cs_...`) the id of the
    PaymentIntent the session created, so the intent's events find it (Stripe Checkout creates the intent
    only when the customer pays).

    Called for `checkout.session.completed` (`session_id` and its `payment_intent`) and before every
    `payment_intent.*` event (the intent's `metadata`: `payment_id` when the caller put our record's id
    there, else `bid_id`, whose one payment still waiting on a session is ours: an offer has one payment
    awaiting the payer at a time), whichever comes first; the second finds the payment already linked and
    changes nothing. A payment linked to another intent is never re-linked.
    """
    if not payment_intent_id or Payment.objects.filter(provider_payment_id=payment_intent_id).exists():
        return None
    waiting = Payment.objects.filter(provider_payment_id__startswith="cs_")
    if session_id:
        candidates = waiting.filter(provider_payment_id=session_id)
    else:
        metadata = metadata if isinstance(metadata, dict) else {}
        if payment_pk := _uuid(metadata.get("payment_id")):
            candidates = waiting.filter(pk=payment_pk)
        elif bid_pk := _uuid(metadata.get("bid_id")):
            candidates = waiting.filter(reference=f"bid:{bid_pk}", status=PaymentStatus.REQUIRES_PAYMENT)
        else:
            return None
    found = list(candidates.values_list("pk", "provider_payment_id", "source")[:2])
    if len(found) != 1:
        return None
    payment_pk, session_ref, source = found[0]
    with transaction.atomic():
        payment_locked(payment_pk, source)
        linked = Payment.objects.filter(pk=payment_pk, provider_payment_id=session_ref).update(
            provider_payment_id=payment_intent_id, updated_at=timezone.now()
        )
    if not linked:
        return None
    logger.info("payment %s: checkout session %s created intent %s", payment_pk, session_ref, payment_intent_id)
    return Payment.objects.get(pk=payment_pk)


def payment_apply_succeeded(
    *,
    provider_payment_id: str,
    event_id: str = "",
    amounts: dict[str, object] | None = None,
    currency: object = None,
    captured: bool = True,
) -> Payment | None:
    """The money is secured: the payment succeeds and its source is told (for a task: delivering).

    `amounts` are the event's minor-unit amounts by field (`amount`, and `amount_received` when the event
    has it) and `currency` its currency; both must be the payment's, or nothing is applied: the refusal is
    recorded on the payment and PaymentMismatch raised (once that record is written). `captured`: the money
    is captured (`payment_intent.succeeded`), not only authorised and held for approval
    (`amount_capturable_updated`, payments made before docs/payouts.md); the capture is written to the
    ledger in the same transaction.

    A payment that had failed is still honoured while its source awaits it again (the payer retried the
    same payment). Money its source no longer awaits (the task was cancelled, or another bid was
    selected) is refunded through the provider.
    """
    with transaction.atomic():
        payment, reason = _apply_succeeded(
            provider_payment_id, event_id, amounts or {"amount": None}, currency, captured
        )
    if reason:
        raise PaymentMismatch(reason)
    return payment


def _apply_succeeded(
    provider_payment_id: str, event_id: str, amounts: dict[str, object], currency: object, captured: bool
) -> tuple[Payment | None, str]:
    payment = _locked_by_ref(provider_payment_id)
    if payment is None:
        logger.info("payment_intent.succeeded for unknown payment %s ignored", provider_payment_id)
        return None, ""
    reason = event_money_mismatch(payment.amount, payment.currency, amounts, currency)
    if payment.status in PAID:
        if captured and payment.status == PaymentStatus.SUCCEEDED and not reason:
            payment_record_capture(payment, timezone.now())  # a held payment captured at the provider
        return payment, ""
    if reason:
        payment.mismatch_reason, payment.mismatch_event_id = reason[:500], event_id[:255]
        payment.mismatch_at = timezone.now()
        payment.save(update_fields=["mismatch_reason", "mismatch_event_id", "mismatch_at", "updated_at"])
        logger.error(
            "payment %s: success event %s refused, not applied (%s still waits): %s",
            payment.provider_payment_id,
            event_id or "-",
            payment.source,
            reason,
        )
        return payment, reason
    source = payment_source(payment.source)
    if not source.awaits(payment):
        logger.warning(
            "payment %s succeeded but %s no longer awaits it: refund due", provider_payment_id, payment.source
        )
        payment_refund_mark_due(payment)
        return payment, ""
    now = timezone.now()
    payment.status, payment.succeeded_at = PaymentStatus.SUCCEEDED, now
    payment.save(update_fields=["status", "succeeded_at", "updated_at"])
    if captured:
        payment_record_capture(payment, now)
    source.succeeded(payment)
    logger.info("payment %s succeeded for %s", provider_payment_id, payment.source)
    return payment, ""


@transaction.atomic
def payment_apply_failed(*, provider_payment_id: str) -> Payment | None:
    """The payment failed: its source is told (a task opens again). A payment already settled one way or
    another never rolls back."""
    payment = _locked_by_ref(provider_payment_id)
    if payment is None:
        logger.info("payment_intent.payment_failed for unknown payment %s ignored", provider_payment_id)
        return None
    if payment.status != PaymentStatus.REQUIRES_PAYMENT:
        return payment
    payment.status = PaymentStatus.FAILED
    payment.save(update_fields=["status", "updated_at"])
    payment_source(payment.source).failed(payment)
    return payment


@transaction.atomic
def payment_apply_canceled(*, provider_payment_id: str) -> Payment | None:
    """`payment_intent.canceled`: for a payment still held for approval its authorisation expired before it
    was captured: the money is gone and the payer was never charged. The payment is `cancelled`, a terminal
    state, and its source told (docs/decisions.md#a-held-payment-that-expired). Any other payment is left as
    it is (one awaiting the payer is cancelled by our own cancel, or fails by its own event)."""
    payment = _locked_by_ref(provider_payment_id)
    if payment is None:
        return None
    if payment.status != PaymentStatus.SUCCEEDED or payment.captured_at is not None:
        return payment  # captured money is not cancelled; released or refunded is final
    payment.status = PaymentStatus.CANCELLED
    payment.save(update_fields=["status", "updated_at"])
    payment_source(payment.source).cancelled(payment)
    logger.error(
        "payment %s of %s expired before capture: the seller cannot be paid from it; needs attention",
        payment.provider_payment_id,
        payment.source,
    )
    return payment


@transaction.atomic
def payment_apply_refunded(
    *, provider_payment_id: str, amount_refunded_minor: int, currency: str, provider_ref: str = ""
) -> Payment | None:
    """`charge.refunded` (docs/decisions.md#refunds-made-at-the-provider): book the part of the provider's
    `amount_refunded_minor` (its running total for the payment) that our records do not hold yet. A refund
    after release reverses the seller's earning; a whole refund tells the source. None for a payment that
    is not ours."""
    payment = _locked_by_ref(provider_payment_id)
    if payment is None:
        return None
    if normalise_currency(currency) != payment.currency:
        raise RefundMismatch(f"Currency {currency!r} in the event, {payment.currency!r} expected.")
    theirs = min(from_minor(amount_refunded_minor, payment.currency), payment.amount)
    new = theirs - payment.refunded_amount
    if new <= 0 or payment.status == PaymentStatus.REFUNDED:
        return payment  # already booked (our own refund's record, or this event before)
    key = f"provider:{payment.pk}:{theirs}"
    if payment.status == PaymentStatus.SUCCEEDED:
        payment_refund_book(payment, upto=theirs, key=key, provider_ref=provider_ref)
    elif payment.status == PaymentStatus.RELEASED:
        earning_reverse(source=payment.source)  # released money was captured: its refund is booked
        payment_refund_book(payment, upto=theirs, key=key, provider_ref=provider_ref)
        if theirs < payment.amount:
            logger.error(
                "payment %s of %s partly refunded at the provider after release: the seller's earning is "
                "reversed and %s %s stay held; needs attention",
                payment.provider_payment_id,
                payment.source,
                payment.amount - theirs,
                payment.currency,
            )
    else:  # never captured by us (awaiting, failed, cancelled): nothing was booked; a refund we owed is made
        payment.refunded_amount = theirs
    full = theirs >= payment.amount
    if full:
        payment.status, payment.refund_due_at = PaymentStatus.REFUNDED, None
    payment.save(update_fields=["status", "refunded_amount", "refund_due_at", "updated_at"])
    if full:
        payment_source(payment.source).refunded(payment)
    logger.warning(
        "payment %s: %s %s refunded at the provider booked (%s)",
        payment.provider_payment_id,
        new,
        payment.currency,
        payment.source,
    )
    return payment


def held_payments_capture(*, now: datetime | None = None, limit: int = 100) -> int:
    """Beat: capture payments still held for approval once HELD_PAYMENT_CAPTURE_AFTER_HOURS old, well before
    the card's authorisation expires. The provider call with no transaction open (capturing is idempotent at
    both providers), then the capture recorded under the source's lock. Returns how many."""
    now = now or timezone.now()
    cutoff = now - timedelta(hours=settings.HELD_PAYMENT_CAPTURE_AFTER_HOURS)
    due = list(
        Payment.objects.filter(
            status=PaymentStatus.SUCCEEDED, captured_at__isnull=True, succeeded_at__lte=cutoff
        ).values_list("pk", "provider_payment_id", "source")[:limit]
    )
    captured = 0
    for payment_pk, provider_payment_id, source in due:
        try:
            get_payment_provider().release_payment(provider_payment_id)
        except (ProviderError, ProviderUnavailable):
            logger.exception("capture of held payment %s failed; the next run retries", provider_payment_id)
            continue
        with transaction.atomic():
            payment = payment_locked(payment_pk, source)
            if payment.status == PaymentStatus.SUCCEEDED and payment.captured_at is None:
                payment_record_capture(payment, timezone.now())
                captured += 1
    return captured
