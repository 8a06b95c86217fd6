"""What a task's payment means for the task (docs/architecture.md#payment-events).

payments moves the money of a payment made for `task:<uuid>` (payments.services.payments) and asks this
source, registered from tasks_market/payment_handlers.py, whether the task still awaits the money and what
follows from it: the task delivering once paid, open again when the payment failed, cancelled when the
money is gone or went back. Every method runs under the task's lock, taken by `lock` before the
payment's, inside the transaction that changes the payment.
"""

from __future__ import annotations

import logging

from django.utils import timezone

from core.http.errors import Forbidden
from payments.models import Payment, PaymentStatus
from tasks_market.models import Bid, BidStatus, Delivery, DeliveryStatus, Task, TaskStatus
from tasks_market.selectors import is_party
from tasks_market.services.announcements import payment_data, publish, task_data
from tasks_market.services.cancels import task_cancel_locked
from tasks_market.services.dispatch import enqueue_dispatch
from tasks_market.services.disputes import payment_refund, payment_refund_released
from tasks_market.services.saved_searches import task_opened

logger = logging.getLogger(__name__)

# A task in one of these has its payment's money still waiting for the work.
OPEN_FOR_WORK = (TaskStatus.DELIVERING, TaskStatus.IN_REVIEW, TaskStatus.DISPUTED)


def _pays_selection(task: Task, payment: Payment) -> bool:
    return task.selected_bid_id is not None and str(task.selected_bid_id) == payment.reference_id


class TaskPayments:
    """The `task` payment source (payments.registry.PaymentSource)."""

    def lock(self, source_id: str) -> None:
        Task.objects.select_for_update().filter(pk=source_id).first()

    def awaits(self, payment: Payment) -> bool:
        """The task awaits this payment of its selected bid, or is open again with the bid pending after
        the payment had failed (the payer retried the same payment)."""
        task = Task.objects.get(pk=payment.source_id)
        if payment.status == PaymentStatus.REQUIRES_PAYMENT:
            return task.status == TaskStatus.AWAITING_PAYMENT and _pays_selection(task, payment)
        if payment.status == PaymentStatus.FAILED:
            bid = Bid.objects.select_for_update().filter(pk=payment.reference_id).first()
            return task.status == TaskStatus.OPEN and bid is not None and bid.status == BidStatus.PENDING
        return False

    def succeeded(self, payment: Payment) -> None:
        """The money is secured: the task goes to delivering, other bids are rejected, the delivery is
        created and dispatched after commit."""
        task = Task.objects.get(pk=payment.source_id)
        bid = Bid.objects.select_for_update().get(pk=payment.reference_id)
        now = timezone.now()
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

    def failed(self, payment: Payment) -> None:
        """The task opens again and its selected bid is pending again."""
        task = Task.objects.get(pk=payment.source_id)
        if task.status == TaskStatus.AWAITING_PAYMENT and _pays_selection(task, payment):
            Bid.objects.filter(pk=payment.reference_id, status=BidStatus.SELECTED).update(
                status=BidStatus.PENDING, updated_at=timezone.now()
            )
            task.status, task.selected_bid = TaskStatus.OPEN, None
            task.save(update_fields=["status", "selected_bid", "updated_at"])
            task_opened(task.pk)
        bidder_id = Bid.objects.filter(pk=payment.reference_id).values_list("bidder_id", flat=True).first()
        publish("payment.failed", payment_data(payment, task), task.poster_id, bidder_id)

    def cancelled(self, payment: Payment) -> None:
        """A held payment expired before capture: the task is cancelled, a terminal state (nothing can be
        released or refunded any more, so the review-window job no longer retries it); live bids are
        rejected, the delivery cancelled, `task.cancelled` announced. Staff settle the work done with both
        sides (docs/decisions.md#a-held-payment-that-expired)."""
        task = Task.objects.get(pk=payment.source_id)
        if task.status in OPEN_FOR_WORK:
            Delivery.objects.filter(task=task).update(status=DeliveryStatus.CANCELLED, updated_at=timezone.now())
            task_cancel_locked(task)
        logger.error("task %s is %s: its held payment %s expired", task.id, task.status, payment.provider_payment_id)

    def refunded(self, payment: Payment) -> None:
        """The task's money went back at the provider: a task still waiting for its work is `cancelled` as a
        dispute's full refund leaves it (its selected bid kept, so a resolution being applied still finds
        the payment); a delivery not disputed is cancelled."""
        task = Task.objects.get(pk=payment.source_id)
        if task.status not in OPEN_FOR_WORK or not _pays_selection(task, payment):
            return
        now = timezone.now()
        Delivery.objects.filter(task=task).exclude(status=DeliveryStatus.DISPUTED).update(
            status=DeliveryStatus.CANCELLED, updated_at=now
        )
        task.status, task.cancelled_at = TaskStatus.CANCELLED, now
        task.save(update_fields=["status", "cancelled_at", "updated_at"])
        publish("task.cancelled", task_data(task), task.poster_id)

    def staff_refund(self, payment: Payment, staff_user) -> None:
        """A released payment is refunded after release (the seller's share reversed); any other is the
        dispute's `refund_full` resolution (docs/decisions.md#staff-refunds-are-resolutions)."""
        task = Task.objects.get(pk=payment.source_id)
        if is_party(staff_user, task):
            raise Forbidden("A party to the task (its poster or the winning agent's owner) cannot refund it.")
        if payment.status == PaymentStatus.RELEASED:
            payment_refund_released(task_id=task.pk)
        else:
            payment_refund(payment_id=payment.pk, staff_user=staff_user)
