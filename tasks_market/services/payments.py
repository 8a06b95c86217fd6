"""Payments follow the provider's events (payment_intent.succeeded / .payment_failed,
docs/decisions.md#payments-webhook-inbound).

The handlers run inside the webhook's transaction; the inbound layer has already dropped duplicates
and events older than one applied to the same payment. Each function checks the current state
and only moves forward, so an event arriving twice or late changes nothing.

A success is applied only when the event's amount (minor units: `amount`, and `amount_received`
when present) and currency are the payment's. A mismatch is recorded on the payment
(`mismatch_reason`, `mismatch_event_id`, `mismatch_at`), logged at ERROR, applies nothing (the task
keeps waiting for its payment) and raises PaymentMismatch after the record is written, so the
webhook marks the event `rejected`. Failures carry no money and are not checked.
"""

from __future__ import annotations

import logging
from datetime import timedelta
from uuid import UUID

from django.conf import settings
from django.db import transaction
from django.utils import timezone

from core.enqueue import enqueue_after_commit
from core.errors import ProviderError, ProviderUnavailable
from payments.money import event_money_mismatch
from payments.providers import get_payment_provider
from payments.services.captures import ledger_captured, ledger_refunded, refund_once
from tasks_market.models import (
    Bid,
    BidStatus,
    Delivery,
    DeliveryStatus,
    Payment,
    PaymentStatus,
    Task,
    TaskStatus,
)
from tasks_market.services.cancels import task_cancel_locked
from tasks_market.services.dispatch import enqueue_dispatch
from tasks_market.services.events import payment_data, publish

logger = logging.getLogger(__name__)


def _locked(provider_payment_id: str) -> tuple[Payment, Task] | None:
    payment = Payment.objects.filter(provider_payment_id=provider_payment_id).only("task_id").first()
    if payment is None:
        return None
    # The task first, then the payment: the same order select and cancel take them in.
    task = Task.objects.select_for_update().get(pk=payment.task_id)
    return Payment.objects.select_for_update().get(pk=payment.pk), task


def _uuid(value: object) -> UUID | None:
    try:
        return UUID(value) if isinstance(value, str) else None
    except ValueError:
        return None


def payment_link_intent(*, payment_intent_id: str, session_id: str = "", metadata: object = None) -> Payment | None:
    """Give the payment whose provider reference is still a checkout session (`cs_...`) the id of the
    PaymentIntent the session created, so the intent's events find it (Stripe Checkout creates the
    intent only when the customer pays).

    Called for `checkout.session.completed` (`session_id` and its `payment_intent`) and before every
    `payment_intent.*` event (the intent's `metadata`: `payment_id` when the caller put our record's id
    there, else `bid_id`, whose one payment still waiting on a session is ours: a bid has one payment
    awaiting the customer at a time), whichever comes first;
    the second finds the payment already linked and changes nothing. A payment linked to another
    intent is never re-linked.
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
            candidates = waiting.filter(bid_id=bid_pk, status=PaymentStatus.REQUIRES_PAYMENT)
        else:
            return None
    found = list(candidates.values_list("pk", "task_id", "provider_payment_id")[:2])
    if len(found) != 1:
        return None
    payment_pk, task_id, session_ref = found[0]
    with transaction.atomic():
        Task.objects.select_for_update().filter(pk=task_id).first()  # the task first, as everywhere
        linked = Payment.objects.filter(pk=payment_pk, provider_payment_id=session_ref).update(
            provider_payment_id=payment_intent_id, updated_at=timezone.now()
        )
    if not linked:
        return None
    logger.info("payment %s: checkout session %s created intent %s", payment_pk, session_ref, payment_intent_id)
    return Payment.objects.get(pk=payment_pk)


class PaymentMismatch(Exception):
    """A success event whose amount or currency is not the payment's; str(exc) is the reason."""


def payment_apply_succeeded(
    *,
    provider_payment_id: str,
    event_id: str = "",
    amounts: dict[str, object] | None = None,
    currency: object = None,
    captured: bool = True,
) -> Payment | None:
    """The money is secured: the task goes to delivering, other bids are rejected, the delivery is
    created and dispatched after commit.

    `amounts` are the event's minor-unit amounts by field (`amount`, and `amount_received` when the
    event has it) and `currency` its currency; both must be the payment's, or nothing is applied:
    the refusal is recorded on the payment and PaymentMismatch raised (once that record is written).
    `captured`: the money is captured (`payment_intent.succeeded`), not only authorised and held for
    approval (`amount_capturable_updated`, payments made before docs/payouts.md); the capture is
    written to the ledger in the same transaction.

    A payment that had failed is still honoured while its task is open again and its bid pending
    (the customer retried the same payment). Money for a task that no longer waits for it (the task
    was cancelled, or another bid was selected) is refunded through the provider.
    """
    with transaction.atomic():
        payment, reason = _apply_succeeded(
            provider_payment_id, event_id, amounts or {"amount": None}, currency, captured
        )
    if reason:
        raise PaymentMismatch(reason)
    return payment


def payment_record_capture(payment: Payment, task: Task, now) -> None:
    """Inside the caller's transaction, under the task's lock: the payment's money is captured, once."""
    if payment.captured_at is None:
        payment.captured_at = now
        payment.save(update_fields=["captured_at", "updated_at"])
        ledger_captured(
            source=f"task:{task.id}",
            currency=payment.currency,
            amount=payment.amount,
            provider_ref=payment.provider_payment_id,
        )


def _apply_succeeded(
    provider_payment_id: str, event_id: str, amounts: dict[str, object], currency: object, captured: bool
) -> tuple[Payment | None, str]:
    found = _locked(provider_payment_id)
    if found is None:
        logger.info("payment_intent.succeeded for unknown payment %s ignored", provider_payment_id)
        return None, ""
    payment, task = found
    if payment.status in (PaymentStatus.SUCCEEDED, PaymentStatus.RELEASED, PaymentStatus.REFUNDED):
        if (
            captured
            and payment.status == PaymentStatus.SUCCEEDED
            and not event_money_mismatch(payment.amount, payment.currency, amounts, currency)
        ):
            payment_record_capture(payment, task, timezone.now())  # a held payment captured at the provider
        return payment, ""
    reason = event_money_mismatch(payment.amount, payment.currency, amounts, currency)
    if reason:
        payment.mismatch_reason, payment.mismatch_event_id = reason[:500], event_id[:255]
        payment.mismatch_at = timezone.now()
        payment.save(update_fields=["mismatch_reason", "mismatch_event_id", "mismatch_at", "updated_at"])
        logger.error(
            "payment %s: success event %s refused, not applied (task %s stays %s): %s",
            payment.provider_payment_id,
            event_id or "-",
            task.id,
            task.status,
            reason,
        )
        return payment, reason
    bid = Bid.objects.select_for_update().get(pk=payment.bid_id)
    awaited = (
        payment.status == PaymentStatus.REQUIRES_PAYMENT
        and task.status == TaskStatus.AWAITING_PAYMENT
        and task.selected_bid_id == bid.id
    )
    resumed = (
        payment.status == PaymentStatus.FAILED and task.status == TaskStatus.OPEN and bid.status == BidStatus.PENDING
    )
    now = timezone.now()
    if not (awaited or resumed):
        return _refund_unexpected(payment, task), ""

    payment.status, payment.succeeded_at = PaymentStatus.SUCCEEDED, now
    payment.save(update_fields=["status", "succeeded_at", "updated_at"])
    if captured:
        payment_record_capture(payment, task, now)
    bid.status = BidStatus.SELECTED
    bid.save(update_fields=["status", "updated_at"])
    Bid.objects.filter(task=task, status=BidStatus.PENDING).exclude(pk=bid.pk).update(
        status=BidStatus.REJECTED, updated_at=now
    )
    task.status, task.selected_bid = TaskStatus.DELIVERING, bid
    task.save(update_fields=["status", "selected_bid", "updated_at"])
    delivery = Delivery.objects.create(task=task, bid=bid, agent_id=bid.agent_id, next_attempt_at=now)
    publish("payment.succeeded", payment_data(payment, task), task.poster_id, bid.bidder_id)
    enqueue_dispatch(delivery.id)
    logger.info("payment %s succeeded: task %s delivering", payment.provider_payment_id, task.id)
    return payment, ""


def _refund_unexpected(payment: Payment, task: Task) -> Payment:
    """A success nothing waits for any more (the task was cancelled, or another payment secured it):
    the customer paid, so the money goes back. Not from here, inside the event's transaction and
    under the task's lock: the refund is due (`refund_due_at`) and `payment_refund_due` makes it once
    this transaction has committed; the sweep makes one whose job was lost."""
    logger.warning(
        "payment %s succeeded but task %s is %s: refund due", payment.provider_payment_id, task.id, task.status
    )
    payment.refund_due_at = timezone.now()
    payment.save(update_fields=["refund_due_at", "updated_at"])
    # Not sent (broker down): refunds_catch_up makes the refund from the beat.
    enqueue_after_commit("tasks_market.tasks.refund_due_payment", str(payment.id))
    return payment


def payment_refund_due(*, payment_id: UUID | str) -> Payment | None:
    """Make a due refund: the provider call with no transaction open (refunds are idempotent at both
    providers: Stripe's is keyed by the payment), then the record under the task's lock. Safe to run
    twice, concurrently too. A refund the provider refuses is left to staff (logged at ERROR, no
    longer due); one that cannot reach the provider stays due for the next sweep.

    Due for a success nothing waited for, and for a paid task cancelled before its work came
    (tasks_market.services.paid_cancel): that payment's captured money leaves the ledger here, once."""
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
        Task.objects.select_for_update().filter(pk=payment.task_id).first()  # the lock order: the task first
        payment = Payment.objects.select_for_update().get(pk=payment.pk)
        if payment.refund_due_at is not None:
            _record_due_refund(payment, ref)
    return payment


def _record_due_refund(payment: Payment, ref: str) -> None:
    fields = ["status", "refund_due_at", "updated_at"]
    if payment.status == PaymentStatus.SUCCEEDED:  # a paid task cancelled: its money leaves the books
        if payment.captured_at is not None:  # a held payment's refund only gives the authorisation back
            ledger_refunded(
                source=f"task:{payment.task_id}",
                currency=payment.currency,
                amount=payment.amount - payment.refunded_amount,
                key=f"cancel:{payment.pk}",
                provider_ref=ref,
            )
        payment.refunded_amount = payment.amount
        fields.append("refunded_amount")
    payment.status, payment.refund_due_at = PaymentStatus.REFUNDED, None
    payment.save(update_fields=fields)
    logger.info("payment %s refunded", payment.provider_payment_id)


def refunds_catch_up(*, older_than: timedelta = timedelta(minutes=5), limit: int = 100) -> int:
    """Sweep: make the refunds due for longer than `older_than` (their job was lost, or the provider
    was unreachable). Returns how many were tried."""
    cutoff = timezone.now() - older_than
    due = list(Payment.objects.filter(refund_due_at__lt=cutoff).values_list("id", flat=True)[:limit])
    for payment_id in due:
        try:
            payment_refund_due(payment_id=payment_id)
        except ProviderUnavailable:
            logger.warning("refund of payment %s still due: the provider is unavailable", payment_id)
    return len(due)


@transaction.atomic
def payment_apply_failed(*, provider_payment_id: str) -> Payment | None:
    """The payment failed: the task opens again and its selected bid is pending again."""
    found = _locked(provider_payment_id)
    if found is None:
        logger.info("payment_intent.payment_failed for unknown payment %s ignored", provider_payment_id)
        return None
    payment, task = found
    if payment.status != PaymentStatus.REQUIRES_PAYMENT:
        return payment  # already settled one way or another: never roll a newer state back
    payment.status = PaymentStatus.FAILED
    payment.save(update_fields=["status", "updated_at"])
    if task.status == TaskStatus.AWAITING_PAYMENT and task.selected_bid_id == payment.bid_id:
        Bid.objects.filter(pk=payment.bid_id, status=BidStatus.SELECTED).update(
            status=BidStatus.PENDING, updated_at=timezone.now()
        )
        task.status, task.selected_bid = TaskStatus.OPEN, None
        task.save(update_fields=["status", "selected_bid", "updated_at"])
    bidder_id = Bid.objects.filter(pk=payment.bid_id).values_list("bidder_id", flat=True).first()
    publish("payment.failed", payment_data(payment, task), task.poster_id, bidder_id)
    return payment


@transaction.atomic
def payment_apply_canceled(*, provider_payment_id: str) -> Payment | None:
    """`payment_intent.canceled`: the provider cancelled the payment. For a payment still held for approval
    this means its authorisation expired before it was captured: the money is gone, and the poster was
    never charged. The payment is `cancelled` and so is its task, a terminal state: nothing can be released
    or refunded any more, so the review-window job no longer retries it; live bids are rejected, the
    delivery cancelled, `task.cancelled` announced, and an ERROR tells staff, who settle the work done with
    both sides (docs/decisions.md#a-held-payment-that-expired). Any other payment is left as it is (one
    awaiting the customer is cancelled by our own cancel, or fails by its own event)."""
    found = _locked(provider_payment_id)
    if found is None:
        return None
    payment, task = found
    if payment.status != PaymentStatus.SUCCEEDED or payment.captured_at is not None:
        return payment  # captured money is not cancelled; released or refunded is final
    payment.status = PaymentStatus.CANCELLED
    payment.save(update_fields=["status", "updated_at"])
    was = task.status
    if task.status in (TaskStatus.DELIVERING, TaskStatus.IN_REVIEW, TaskStatus.DISPUTED):
        Delivery.objects.filter(task=task).update(status=DeliveryStatus.CANCELLED, updated_at=timezone.now())
        task_cancel_locked(task)
    logger.error(
        "payment %s of task %s (%s, now %s) expired before capture: the seller cannot be paid from it; needs attention",
        payment.provider_payment_id,
        task.id,
        was,
        task.status,
    )
    return payment


def held_payments_capture(*, now=None, limit: int = 100) -> int:
    """Beat: capture payments still held for approval once HELD_PAYMENT_CAPTURE_AFTER_HOURS old, well
    before the card's authorisation expires. The provider call with no transaction open (capturing is
    idempotent at both providers), then the capture recorded under the task's lock. Returns how many."""
    now = now or timezone.now()
    cutoff = now - timedelta(hours=settings.HELD_PAYMENT_CAPTURE_AFTER_HOURS)
    due = list(
        Payment.objects.filter(
            status=PaymentStatus.SUCCEEDED, captured_at__isnull=True, succeeded_at__lte=cutoff
        ).values_list("pk", "provider_payment_id", "task_id")[:limit]
    )
    captured = 0
    for payment_pk, provider_payment_id, task_id in due:
        try:
            get_payment_provider().release_payment(provider_payment_id)
        except (ProviderError, ProviderUnavailable):
            logger.exception("capture of held payment %s failed; the next run retries", provider_payment_id)
            continue
        with transaction.atomic():
            task = Task.objects.select_for_update().get(pk=task_id)  # the lock order: the task first
            payment = Payment.objects.select_for_update().get(pk=payment_pk)
            if payment.status == PaymentStatus.SUCCEEDED and payment.captured_at is None:
                payment_record_capture(payment, task, timezone.now())
                captured += 1
    return captured
