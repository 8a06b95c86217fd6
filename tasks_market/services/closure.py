"""Closing an account in the marketplace (accounts.closure; docs/decisions.md#closing-an-account).

Inside the transaction that closes the account, the task rows first (the lock order of select, cancel and
the payment events):

- as a seller: its pending bids are withdrawn (`bid_withdraw`, the bidder's own withdraw); a selection of
  one of its bids still awaiting the poster's payment is given back (the task open again, the bid
  withdrawn), and that payment is cancelled at the provider after commit. The close is refused (409
  `deliveries_owed`) while a task paid for one of its bids waits for its agent's work (`delivering`, or
  `in_review`, which a revision request sends back): the poster's money would be held for a delivery
  that can never come, and nothing here may move that money.
- as a poster: its open tasks and those awaiting payment are cancelled as a cancel would (live bids
  rejected, `task.cancelled` announced), their waiting payments cancelled at the provider after commit.
  Its paid tasks keep running: the seller's work is honoured (a submitted delivery is released by the
  review window, a dispute by staff).

A payment left waiting is never cancelled inside the transaction (no lock across the provider): until its
job has run, a customer who pays it anyway is refunded, since nothing waits for the money any more
(`payment_apply_succeeded`).
"""

from __future__ import annotations

import logging

from django.db.models import Q
from django.utils import timezone

from core.http.errors import InvalidState
from core.ops.enqueue import enqueue_after_commit
from payments.models import PaymentStatus
from tasks_market.models import Bid, BidStatus, Task, TaskStatus
from tasks_market.selectors import task_payments
from tasks_market.services.bids import bid_withdraw
from tasks_market.services.cancels import task_cancel_locked
from tasks_market.services.errors import DeliveriesOwed
from tasks_market.services.saved_searches import task_opened

logger = logging.getLogger(__name__)

UNPAID = (TaskStatus.OPEN, TaskStatus.AWAITING_PAYMENT)
# A paid task in these states still needs its agent's work.
OWED = (TaskStatus.DELIVERING, TaskStatus.IN_REVIEW)
CANCEL_TASK = "payments.tasks.cancel_abandoned_payment"


def market_wind_down(*, user) -> None:
    """The closing step of the marketplace (registered in apps.py), inside the close's transaction."""
    mine = Q(poster=user)
    bid_on = Q(bids__bidder=user, bids__status__in=(BidStatus.PENDING, BidStatus.SELECTED))
    task_ids = list(Task.objects.filter(mine | bid_on, status__in=UNPAID).values_list("pk", flat=True).distinct())
    # Locked in one order, and re-read: a task that moved meanwhile (paid, say) drops out here.
    tasks = list(Task.objects.select_for_update().filter(pk__in=task_ids, status__in=UNPAID).order_by("pk"))
    owed = Task.objects.filter(status__in=OWED, selected_bid__bidder=user)
    if owed.exists():
        raise DeliveriesOwed()
    for task in tasks:
        if task.poster_id == user.pk:
            _cancel_posted(task)
        else:
            _withdraw_from(task, user)


def _cancel_posted(task: Task) -> None:
    _cancel_waiting_payments_after_commit(task)
    task_cancel_locked(task)


def _cancel_waiting_payments_after_commit(task: Task) -> None:
    """Lock the task's payments still waiting for the customer and queue their cancel at the provider."""
    waiting = task_payments(task.pk).select_for_update().filter(status=PaymentStatus.REQUIRES_PAYMENT)
    for payment_id in list(waiting.values_list("pk", flat=True)):
        enqueue_after_commit(CANCEL_TASK, str(payment_id))


def _withdraw_from(task: Task, user) -> None:
    if task.status == TaskStatus.AWAITING_PAYMENT and Bid.objects.filter(pk=task.selected_bid_id, bidder=user).exists():
        _give_back_selection(task)
    for bid_id in Bid.objects.filter(task=task, bidder=user, status=BidStatus.PENDING).values_list("pk", flat=True):
        try:
            bid_withdraw(user=user, task_id=task.pk, bid_id=bid_id)
        except InvalidState:  # moved off pending meanwhile; the task's lock leaves nothing else it can be
            logger.warning("bid %s of closing account %s was no longer pending", bid_id, user.pk)


def _give_back_selection(task: Task) -> None:
    """The task open again and the closing seller's selected bid withdrawn; the payment the poster was
    asked for is cancelled after commit."""
    now = timezone.now()
    Bid.objects.filter(pk=task.selected_bid_id, status=BidStatus.SELECTED).update(
        status=BidStatus.WITHDRAWN, updated_at=now
    )
    _cancel_waiting_payments_after_commit(task)
    task.status, task.selected_bid = TaskStatus.OPEN, None
    task.save(update_fields=["status", "selected_bid", "updated_at"])
    task_opened(task.pk)
    logger.info("selection on task %s given back: the selected bid's account closed", task.pk)
