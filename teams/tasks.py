from __future__ import annotations

import logging

from celery import shared_task

from teams.services import team_wind_down_cancel, teams_cancel_ended, teams_wind_down_catch_up

logger = logging.getLogger(__name__)


@shared_task(name="teams.tasks.cancel_ended_subscriptions")
def cancel_ended_subscriptions() -> int:
    count = teams_cancel_ended()
    if count:
        logger.info("cancelled %d team(s) whose billing period ended", count)
    # The same hourly run asks the provider again for closed accounts' teams whose cancel was not recorded.
    teams_wind_down_catch_up()
    return count


@shared_task(name="teams.tasks.cancel_closed_account_team", ignore_result=True)
def cancel_closed_account_team(team_id: str) -> None:
    """Queued when an account closes (services.teams_wind_down); safe to run twice."""
    team_wind_down_cancel(team_id=team_id)
