from __future__ import annotations

import logging

from celery import shared_task

from teams.services import teams_cancel_ended

logger = logging.getLogger(__name__)


@shared_task(name="teams.tasks.cancel_ended_subscriptions")
def cancel_ended_subscriptions() -> int:
    count = teams_cancel_ended()
    if count:
        logger.info("cancelled %d team(s) whose billing period ended", count)
    return count
