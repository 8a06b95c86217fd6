"""A paid task whose work does not come has a way out (docs/decisions.md#cancelling-a-paid-task): the poster
cancels it once its delivery is overdue, or the seller gives it up at any time (withdraws its selected bid),
and the poster gets the payment back in full.

Exactly once, however the poster's cancel, the seller's withdrawal, an approval, the review window or a
dispute race:

1. Claim, under the task's lock: a `delivering` task (or, for the seller, one `in_review` whose submission
   nobody acted on yet) becomes `cancelled`, its delivery `cancelled`, live bids rejected (the seller's
   own withdrawn), and its secured payment's refund is due (`refund_due_at`). Every other money path needs
   the task in another state, so after the claim none applies.
2. The refund at the provider, with no transaction open, keyed by the payment (one per selection of the
   task): payments.services.payments.payment_refund_due.
3. Its record, under the task's lock, once: the payment `refunded`, its captured money out of the ledger.
   A provider that cannot be reached leaves the refund due; the beat's refund sweep makes it.
"""

from __future__ import annotations

import logging
from datetime import datetime, timedelta
from uuid import UUID

from django.db import transaction
from django.utils import timezone

from core.http.errors import InvalidState, NotFound, ProviderUnavailable
from payments.models import PaymentStatus
from payments.services.payments import payment_refund_due, payment_refund_mark_due
from tasks_market.models import Bid, BidStatus, Delivery, DeliveryStatus, Task, TaskStatus
from tasks_market.selectors import selected_payment
from tasks_market.services.cancels import task_cancel_locked

logger = logging.getLogger(__name__)


def delivery_due_at(task: Task, bid: Bid, paid_at: datetime) -> datetime:
    """When the work is overdue: the task's deadline, but never before the bid's own `eta_hours` from the
    payment (a task paid close to or after its deadline still gives the agent the time it offered)."""
    return max(task.deadline, paid_at + timedelta(hours=bid.eta_hours))


def task_cancel_paid(*, task_id: UUID, poster=None) -> Task:
    """The poster (`None`: staff) cancels a paid task whose delivery is overdue; the payment is refunded."""
    payment_pk = _claim(task_id, poster=poster)
    return _refund(task_id, payment_pk)


def bid_withdraw_paid(*, user, task_id: UUID, bid_id: UUID) -> Bid:
    """The seller gives up the paid task of its selected bid (a mutual cancel: the poster gets everything
    back); the bid is `withdrawn`."""
    payment_pk = _claim(task_id, seller=user, bid_id=bid_id)
    _refund(task_id, payment_pk)
    return Bid.objects.get(pk=bid_id)


def _refund(task_id: UUID, payment_pk: UUID) -> Task:
    try:
        payment_refund_due(payment_id=payment_pk)
    except ProviderUnavailable:  # the claim stands: the refund stays due and the sweep makes it
        logger.warning("refund of cancelled task %s's payment still due: the provider is unavailable", task_id)
    return Task.objects.get(pk=task_id)


@transaction.atomic
def _claim(task_id: UUID, *, poster=None, seller=None, bid_id: UUID | None = None) -> UUID:
    rows = Task.objects.select_for_update().filter(pk=task_id)
    task = (rows.filter(poster=poster) if poster is not None else rows).first()
    delivery = (
        Delivery.objects.select_for_update(of=("self",)).select_related("agent").filter(task=task).first()
        if task is not None
        else None
    )
    if task is None or (seller is not None and (delivery is None or delivery.agent.owner_id != seller.pk)):
        raise NotFound()
    if seller is not None and delivery.bid_id != bid_id:
        raise NotFound()
    payment = selected_payment(task, lock=True, status=PaymentStatus.SUCCEEDED, refund_due_at__isnull=True)
    if payment is None or delivery is None or not _claimable(task, delivery, by_seller=seller is not None):
        raise InvalidState(f"Only a paid task whose work has not been handed in can be cancelled; it is {task.status}.")
    now = timezone.now()
    if seller is None:
        due = delivery_due_at(task, delivery.bid, payment.succeeded_at or payment.created_at)
        if now < due:
            raise InvalidState(
                f"The delivery is due by {due.isoformat()}; until then only the agent's owner can cancel "
                "(by withdrawing its bid, which refunds you in full)."
            )
    payment_refund_mark_due(payment, job=False)  # made right after this claim commits (_refund)
    delivery.status = DeliveryStatus.CANCELLED
    delivery.save(update_fields=["status", "updated_at"])
    if seller is not None:
        Bid.objects.filter(pk=delivery.bid_id).update(status=BidStatus.WITHDRAWN, updated_at=now)
    task_cancel_locked(task)
    logger.info("paid task %s cancelled by its %s; payment %s refund due", task.id, _who(seller), payment.pk)
    return payment.pk


def _claimable(task: Task, delivery: Delivery, *, by_seller: bool) -> bool:
    if task.status == TaskStatus.DELIVERING:
        return True
    # The seller may give up work it handed in, while nobody has approved or disputed it (an approval's
    # claim moves the delivery to `approved` first, under this same lock).
    return by_seller and task.status == TaskStatus.IN_REVIEW and delivery.status == DeliveryStatus.SUBMITTED


def _who(seller) -> str:
    return "seller" if seller is not None else "poster"
