"""The cancel of a task itself, shared by every way a task ends cancelled (a cancel, a paid task's cancel
with its refund, an account's close, an expired held payment). Imports no other service, so all of them
can use it."""

from __future__ import annotations

from django.utils import timezone

from tasks_market.models import Bid, BidStatus, Task, TaskStatus
from tasks_market.models.market import LIVE_BID_STATUSES
from tasks_market.services.announcements import publish, task_data


def task_cancel_locked(task: Task) -> Task:
    """The cancel itself, on a task the caller holds the lock of and has checked: live bids rejected, the
    task cancelled, `task.cancelled` announced to the poster and the bidders. Its payments are the caller's."""
    now = timezone.now()
    bidders = list(
        Bid.objects.filter(task=task, status__in=LIVE_BID_STATUSES).values_list("bidder_id", flat=True).distinct()
    )
    Bid.objects.filter(task=task, status__in=LIVE_BID_STATUSES).update(status=BidStatus.REJECTED, updated_at=now)
    task.status = TaskStatus.CANCELLED
    task.selected_bid = None
    task.cancelled_at = now
    task.save(update_fields=["status", "selected_bid", "cancelled_at", "updated_at"])
    publish("task.cancelled", task_data(task), task.poster_id, *bidders)
    return task
