"""Refunds the provider reports (`charge.refunded`), ours or made in its dashboard
(docs/decisions.md#refunds-made-at-the-provider).

The charge's `amount_refunded` is the provider's running total. Whatever of it our records do not hold
yet (`Payment.refunded_amount`) is booked here, once: the webhook's duplicate and stale-event guards
aside, a total already booked changes nothing, so the event may come before or after our own record of
the same refund (which books only what is still missing), and twice.

- A payment secured and not released (`succeeded`, captured or held): the refund is recorded (the
  captured money leaves the ledger); refunded in full, the payment is `refunded` and a task still open
  for work is `cancelled`.
- A released payment: the seller's earning is reversed (payments.services.refunds.earning_reverse: a
  paid-out one is debited from the seller's balance) and the refund recorded; a partial refund after
  release leaves the rest held for staff (logged at ERROR).
"""

from __future__ import annotations

import logging
from decimal import Decimal

from django.db import transaction
from django.utils import timezone

from payments.money import from_minor, normalise_currency
from payments.services.captures import ledger_refunded
from payments.services.refunds import earning_reverse
from tasks_market.models import Delivery, DeliveryStatus, Payment, PaymentStatus, Task, TaskStatus
from tasks_market.services.events import publish, task_data

logger = logging.getLogger(__name__)

# A task in one of these has its payment's money still waiting for the work: a full refund ends it.
_OPEN_FOR_WORK = (TaskStatus.DELIVERING, TaskStatus.IN_REVIEW, TaskStatus.DISPUTED)


class RefundMismatch(Exception):
    """The event's currency is not the payment's; str(exc) is the reason."""


@transaction.atomic
def payment_apply_refunded(
    *, provider_payment_id: str, amount_refunded_minor: int, currency: str, provider_ref: str = ""
) -> Payment | None:
    """Book the part of the provider's `amount_refunded_minor` (its running total for the payment) that
    our records do not hold yet. None for a payment that is not ours."""
    payment = Payment.objects.filter(provider_payment_id=provider_payment_id).only("task_id").first()
    if payment is None:
        return None
    task = Task.objects.select_for_update().get(pk=payment.task_id)  # the lock order: the task first
    payment = Payment.objects.select_for_update().get(pk=payment.pk)
    if normalise_currency(currency) != payment.currency:
        raise RefundMismatch(f"Currency {currency!r} in the event, {payment.currency!r} expected.")
    theirs = min(from_minor(amount_refunded_minor, payment.currency), payment.amount)
    new = theirs - payment.refunded_amount
    if new <= 0 or payment.status == PaymentStatus.REFUNDED:
        return payment  # already booked (our own refund's record, or this event before)
    if payment.status == PaymentStatus.SUCCEEDED:
        _book(payment, new, provider_ref, captured=payment.captured_at is not None)
    elif payment.status == PaymentStatus.RELEASED:
        earning_reverse(source=f"task:{task.id}")
        _book(payment, new, provider_ref, captured=True)
        if theirs < payment.amount:
            logger.error(
                "payment %s of task %s partly refunded at the provider after release: the seller's earning is "
                "reversed and %s %s stay held; needs attention",
                payment.provider_payment_id,
                task.id,
                payment.amount - theirs,
                payment.currency,
            )
    else:  # never captured by us (awaiting, failed, cancelled): nothing was booked; a refund we owed is made
        payment.refunded_amount = theirs
    full = theirs >= payment.amount
    if full:
        payment.status, payment.refund_due_at = PaymentStatus.REFUNDED, None
    payment.save(update_fields=["status", "refunded_amount", "refund_due_at", "updated_at"])
    if full and task.status in _OPEN_FOR_WORK and task.selected_bid_id == payment.bid_id:
        _end(task)
    logger.warning(
        "payment %s: %s %s refunded at the provider booked (task %s %s)",
        payment.provider_payment_id,
        new,
        payment.currency,
        task.id,
        task.status,
    )
    return payment


def _end(task: Task) -> None:
    """The task's money went back: it is `cancelled` as a dispute's full refund leaves it (its selected bid
    kept, so a resolution being applied still finds the payment); a delivery not disputed is cancelled."""
    now = timezone.now()
    Delivery.objects.filter(task=task).exclude(status=DeliveryStatus.DISPUTED).update(
        status=DeliveryStatus.CANCELLED, updated_at=now
    )
    task.status, task.cancelled_at = TaskStatus.CANCELLED, now
    task.save(update_fields=["status", "cancelled_at", "updated_at"])
    publish("task.cancelled", task_data(task), task.poster_id)


def _book(payment: Payment, amount: Decimal, provider_ref: str, *, captured: bool) -> None:
    if captured:  # a held payment's refund only gives the authorisation back: no money was booked
        ledger_refunded(
            source=f"task:{payment.task_id}",
            currency=payment.currency,
            amount=amount,
            key=f"provider:{payment.pk}:{payment.refunded_amount + amount}",
            provider_ref=provider_ref,
        )
    payment.refunded_amount += amount
