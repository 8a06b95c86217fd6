"""Payments follow the provider's events (payment_intent.succeeded / .payment_failed, CONTRACT §9).

The handlers run inside the webhook's transaction; the inbound layer has already dropped duplicates
and events older than one applied to the same payment. Each function checks the current state
and only moves forward, so an event arriving twice or late changes nothing.

A success is applied only when the event's amount (minor units: `amount`, and `amount_received`
when present) and currency are the payment's (issue 14 row 8). A mismatch is recorded on the payment
(`mismatch_reason`, `mismatch_event_id`, `mismatch_at`), logged at ERROR, applies nothing (the task
keeps waiting for its payment) and raises PaymentMismatch after the record is written, so the
webhook marks the event `rejected`. Failures carry no money and are not checked.
"""

from __future__ import annotations

import logging
from uuid import UUID

from django.db import transaction
from django.utils import timezone

from core.errors import InvalidState, NotFound, ProviderError
from core.providers.payments import get_payment_provider
from core.providers.payments.money import normalise_currency, to_minor
from tasks_market.models import Bid, BidStatus, Delivery, Payment, PaymentStatus, Task, TaskStatus
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


class PaymentMismatch(Exception):
    """A success event whose amount or currency is not the payment's; str(exc) is the reason."""


def _mismatch(payment: Payment, event_amounts: dict[str, object], event_currency: object) -> str:
    """Why the event's money is not this payment's, or "" when it is."""
    try:
        expected = to_minor(payment.amount, payment.currency)
        ours = normalise_currency(payment.currency)
    except ProviderError:
        return f"The payment's own amount {payment.amount} {payment.currency!r} cannot be compared."
    theirs = event_currency.strip().lower() if isinstance(event_currency, str) else None
    if theirs != ours:
        return f"Currency {event_currency!r} in the event, {ours!r} expected."
    for field, value in event_amounts.items():
        if not isinstance(value, int) or isinstance(value, bool) or value != expected:
            return f"{field} {value!r} ({theirs}, minor units) in the event, {expected} expected."
    return ""


def payment_apply_succeeded(
    *,
    provider_payment_id: str,
    event_id: str = "",
    amounts: dict[str, object] | None = None,
    currency: object = None,
) -> Payment | None:
    """The money is secured: the task goes to delivering, other bids are rejected, the delivery is
    created and dispatched after commit.

    `amounts` are the event's minor-unit amounts by field (`amount`, and `amount_received` when the
    event has it) and `currency` its currency; both must be the payment's, or nothing is applied:
    the refusal is recorded on the payment and PaymentMismatch raised (once that record is written).

    A payment that had failed is still honoured while its task is open again and its bid pending
    (the customer retried the same payment). Money for a task that no longer waits for it (the task
    was cancelled, or another bid was selected) is refunded through the provider.
    """
    with transaction.atomic():
        payment, reason = _apply_succeeded(provider_payment_id, event_id, amounts or {"amount": None}, currency)
    if reason:
        raise PaymentMismatch(reason)
    return payment


def _apply_succeeded(
    provider_payment_id: str, event_id: str, amounts: dict[str, object], currency: object
) -> tuple[Payment | None, str]:
    found = _locked(provider_payment_id)
    if found is None:
        logger.info("payment_intent.succeeded for unknown payment %s ignored", provider_payment_id)
        return None, ""
    payment, task = found
    if payment.status in (PaymentStatus.SUCCEEDED, PaymentStatus.RELEASED, PaymentStatus.REFUNDED):
        return payment, ""
    reason = _mismatch(payment, amounts, currency)
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
    logger.warning(
        "payment %s succeeded but task %s is %s: refunding", payment.provider_payment_id, task.id, task.status
    )
    try:
        get_payment_provider().refund_payment(payment.provider_payment_id)
    except ProviderError:  # refused: a retry of the event cannot change that; staff decide
        logger.exception("refund of unexpected payment %s refused; needs attention", payment.provider_payment_id)
        return payment
    payment.status = PaymentStatus.REFUNDED
    payment.save(update_fields=["status", "updated_at"])
    return payment


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
def payment_refund(*, payment_id: UUID) -> Payment:
    """Staff: refund the payment of a disputed task through the provider."""
    payment = Payment.objects.filter(pk=payment_id).only("task_id").first()
    if payment is None:
        raise NotFound()
    task = Task.objects.select_for_update().get(pk=payment.task_id)
    payment = Payment.objects.select_for_update().get(pk=payment_id)
    if task.status != TaskStatus.DISPUTED or payment.status != PaymentStatus.SUCCEEDED:
        raise InvalidState("Only the secured payment of a disputed task can be refunded.")
    get_payment_provider().refund_payment(payment.provider_payment_id)
    payment.status = PaymentStatus.REFUNDED
    payment.save(update_fields=["status", "updated_at"])
    return payment
