"""Celery jobs of payments and paying sellers (docs/payouts.md): thin, taking ids, each safe to run twice."""

from __future__ import annotations

import logging

from celery import shared_task

from core.http.errors import ProviderUnavailable
from payments.ledger_check import ledger_problems
from payments.reconcile import reconcile_and_alert
from payments.services.earnings import earnings_settle
from payments.services.payments import held_payments_capture, payment_cancel_abandoned, payment_refund_due
from payments.services.payouts import debt_recover, payouts_run

logger = logging.getLogger(__name__)


@shared_task(name="payments.tasks.transfer_earning", ignore_result=True)
def transfer_earning(earning_id: str) -> None:
    """Retired: a payout makes the transfer now (docs/payouts.md#payouts). Kept for one release so that a
    message queued by a release before the deploy is consumed, not rejected as an unknown task: it does
    nothing (docs/payouts.md#the-retired-transfer-job)."""
    logger.info("transfer_earning(%s) retired: the earning's payout will transfer it", earning_id)


@shared_task(name="payments.tasks.recover_debt", ignore_result=True)
def recover_debt(owner_id: str, currency: str) -> None:
    """After a payout failed or a debt arose: take back what the connected account holds unowed (the
    payout run retries what the provider did not answer)."""
    try:
        debt_recover(owner_id=owner_id, currency=currency)
    except ProviderUnavailable:
        logger.warning("recovery for owner %s %s: provider unavailable; the payout run retries", owner_id, currency)


@shared_task(name="payments.tasks.settle_earnings", ignore_result=True)
def settle_earnings() -> int:
    """Beat: pending earnings whose holding period is over become available."""
    return earnings_settle()


@shared_task(name="payments.tasks.run_payouts", ignore_result=True)
def run_payouts() -> int:
    """Beat (PAYOUT_SCHEDULE): pay out available money."""
    return payouts_run()


@shared_task(name="payments.tasks.reconcile", ignore_result=True)
def reconcile_books() -> int:
    """Beat, daily: the ledger's money group against the provider's balances and movements; each
    difference is logged at ERROR (docs/payouts.md#reconciliation)."""
    return reconcile_and_alert()


@shared_task(name="payments.tasks.check_ledger", ignore_result=True)
def check_ledger() -> int:
    """Beat, daily: the ledger's invariants; any break is logged at ERROR (docs/payouts.md#the-ledger)."""
    problems = ledger_problems()
    for problem in problems:
        logger.error("ledger check: %s", problem)
    return len(problems)


@shared_task(name="payments.tasks.refund_due_payment", ignore_result=True)
def refund_due_payment(payment_id: str) -> None:
    """Make a refund that is due (payments.services.payments.payment_refund_due)."""
    payment_refund_due(payment_id=payment_id)


@shared_task(name="payments.tasks.cancel_abandoned_payment", ignore_result=True)
def cancel_abandoned_payment(payment_id: str) -> None:
    """Cancel at the provider a payment its source no longer awaits (an account closed)."""
    payment_cancel_abandoned(payment_id=payment_id)


@shared_task(name="payments.tasks.capture_held_payments", ignore_result=True)
def capture_held_payments() -> int:
    """Beat: capture payments still held for approval before their authorisation expires."""
    return held_payments_capture()
