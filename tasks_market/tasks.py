"""Celery jobs of the marketplace (background work, not the marketplace's `Task` entity, which is in
models/market.py): thin, taking ids, each safe to run twice (claimed or status-guarded)."""

from __future__ import annotations

import logging
from datetime import datetime

from celery import shared_task

from payments.services.payments import (
    held_payments_capture,
    payment_cancel_abandoned,
    payment_refund_due,
    refunds_catch_up,
)
from tasks_market.services.benchmarks import benchmark_run
from tasks_market.services.bids import bid_judge, judgements_catch_up
from tasks_market.services.deliveries import deliveries_release_due
from tasks_market.services.dispatch import deliveries_sweep, delivery_dispatch_attempt
from tasks_market.services.saved_searches import search_match_attempt, search_matches_find, search_matches_sweep

logger = logging.getLogger(__name__)


@shared_task(name="tasks_market.tasks.dispatch_delivery", ignore_result=True)
def dispatch_delivery(delivery_id: str, claim: str | None = None) -> None:
    """One dispatch attempt; a failed one queues the next with the schedule's countdown.

    The follow-up only acts once the delivery is due again, so in eager mode (which ignores
    countdowns) its immediate run finds nothing due and stops.
    """
    retry_in = delivery_dispatch_attempt(
        delivery_id=delivery_id, claim=datetime.fromisoformat(claim) if claim else None
    )
    if retry_in is None:
        return
    try:
        dispatch_delivery.apply_async(args=[delivery_id, None], countdown=retry_in)
    except Exception:  # the broker is down: the sweep queues it when it is overdue
        logger.exception("could not queue the next dispatch attempt of delivery %s", delivery_id)


@shared_task(name="tasks_market.tasks.match_saved_searches", ignore_result=True)
def match_saved_searches(task_id: str) -> int:
    """The saved searches a task that became open matches: one announcement per agent."""
    return search_matches_find(task_id=task_id)


@shared_task(name="tasks_market.tasks.announce_match", ignore_result=True)
def announce_match(match_id: str) -> None:
    """One attempt of a `task.matched` announcement; a failed one queues the next with its countdown."""
    retry_in = search_match_attempt(match_id=match_id)
    if retry_in is None:
        return
    try:
        announce_match.apply_async(args=[match_id], countdown=retry_in)
    except Exception:  # the broker is down: the sweep queues it when it is overdue
        logger.exception("could not queue the next attempt of announcement %s", match_id)


@shared_task(name="tasks_market.tasks.judge_bid", ignore_result=True)
def judge_bid(bid_id: str) -> None:
    bid_judge(bid_id=bid_id)


@shared_task(name="tasks_market.tasks.run_benchmark", ignore_result=True)
def run_benchmark(run_id: str) -> None:
    benchmark_run(run_id=run_id)


@shared_task(name="tasks_market.tasks.sweep_deliveries", ignore_result=True)
def sweep_deliveries() -> dict[str, int]:
    """Beat: recover lost or stuck dispatches, bids whose judge job was lost, refunds still due and saved-search
    announcements whose message was lost (see CELERY_BEAT_SCHEDULE)."""
    result = deliveries_sweep()
    judged = judgements_catch_up()
    refunds = refunds_catch_up()
    announcements = search_matches_sweep()
    return {
        "released": result.released,
        "retried": result.retried,
        "requeued": result.requeued,
        "judged": judged,
        "refunds": refunds,
        "announcements": announcements,
    }


@shared_task(name="tasks_market.tasks.release_reviewed_deliveries", ignore_result=True)
def release_reviewed_deliveries() -> int:
    """Beat: release deliveries whose review window (REVIEW_WINDOW_HOURS) passed in silence."""
    return deliveries_release_due()


# Payments moved to the payments app (docs/decisions.md#one-money-app), and their jobs with them
# (payments.tasks). These names are kept for one release, so that a message queued before the deploy is
# still consumed: each does what the payments job of the same name does.


@shared_task(name="tasks_market.tasks.refund_due_payment", ignore_result=True)
def refund_due_payment(payment_id: str) -> None:
    """Retired name of payments.tasks.refund_due_payment."""
    payment_refund_due(payment_id=payment_id)


@shared_task(name="tasks_market.tasks.cancel_abandoned_payment", ignore_result=True)
def cancel_abandoned_payment(payment_id: str) -> None:
    """Retired name of payments.tasks.cancel_abandoned_payment."""
    payment_cancel_abandoned(payment_id=payment_id)


@shared_task(name="tasks_market.tasks.capture_held_payments", ignore_result=True)
def capture_held_payments() -> int:
    """Retired name of payments.tasks.capture_held_payments."""
    return held_payments_capture()
