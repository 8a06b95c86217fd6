"""Celery jobs of paying sellers (docs/payouts.md): thin, taking ids, each safe to run twice."""

from __future__ import annotations

import logging

from celery import shared_task

from payments.ledger_check import ledger_problems
from payments.services.earnings import earning_transfer, earnings_settle
from payments.services.payouts import payouts_run

logger = logging.getLogger(__name__)


@shared_task(name="payments.tasks.transfer_earning", ignore_result=True)
def transfer_earning(earning_id: str) -> None:
    earning_transfer(earning_id=earning_id)


@shared_task(name="payments.tasks.settle_earnings", ignore_result=True)
def settle_earnings() -> int:
    """Beat: pending earnings whose payment has settled become available."""
    return earnings_settle()


@shared_task(name="payments.tasks.run_payouts", ignore_result=True)
def run_payouts() -> int:
    """Beat (PAYOUT_SCHEDULE): pay out available money."""
    return payouts_run()


@shared_task(name="payments.tasks.check_ledger", ignore_result=True)
def check_ledger() -> int:
    """Beat, daily: the ledger's invariants; any break is logged at ERROR (docs/payouts.md#the-ledger)."""
    problems = ledger_problems()
    for problem in problems:
        logger.error("ledger check: %s", problem)
    return len(problems)
