"""Celery tasks for outbound webhooks: thin, by id, safe to run twice (the delivery is claimed first)."""

from __future__ import annotations

import logging

from celery import shared_task

from webhooks_app.delivery import webhook_deliveries_sweep, webhook_delivery_attempt

logger = logging.getLogger(__name__)


@shared_task(name="webhooks_app.tasks.deliver_webhook", ignore_result=True)
def deliver_webhook(delivery_id: str) -> None:
    """One attempt; a failed one queues the next with the schedule's countdown.

    The retry is a separate message that only acts once the delivery is due again, so in eager mode
    (which ignores countdowns) the immediate re-run finds nothing due and stops.
    """
    retry_in = webhook_delivery_attempt(delivery_id=delivery_id)
    if retry_in is None:
        return
    try:
        deliver_webhook.apply_async(args=[delivery_id], countdown=retry_in)
    except Exception:  # the broker is down: the sweep queues it when it is overdue
        logger.exception("could not queue the retry of webhook delivery %s", delivery_id)


@shared_task(name="webhooks_app.tasks.sweep_webhook_deliveries", ignore_result=True)
def sweep_webhook_deliveries() -> int:
    return webhook_deliveries_sweep()
