"""Staff resolve a disputed task with money (docs/payouts.md#disputes): refund the poster in full, release
in full to the seller, or split (an amount refunded, the rest released), with a note.

Applied exactly once however often it is submitted, and by two staff at once:

1. Claim, under the task's lock: the first submission writes the `DisputeResolution` (`applying`); a
   later one finds it (the same decision continues it; a different one is 409 `invalid_state`).
2. The provider calls, with no transaction open, each with an idempotency key derived from the
   resolution: a held payment is captured first when anything is released or partly refunded, then the
   refund (`dispute:<id>:refund`). A twin making the same calls gets the same answers.
3. Record, under the task's lock, once (`applied`): the payment refunded and/or released, the ledger
   lines, the seller's earning for the released part, the task `completed` (anything released) or
   `cancelled` (all refunded), `dispute.resolved` announced.

A provider failure leaves the resolution `applying`; submitting it again finishes it.

Whoever resolves must not be a party to the task (its poster or the winning agent's owner), superuser or
not: 403 `permission_denied` (docs/decisions.md#staff-permissions).
"""

from __future__ import annotations

import logging
from dataclasses import dataclass
from decimal import Decimal
from typing import Any
from uuid import UUID

from django.db import transaction
from django.utils import timezone

from core.http.errors import Forbidden, InvalidState, NotFound
from payments.fees import FeeTerms, fee_split
from payments.models import Payment, PaymentStatus
from payments.money import places_problem
from payments.services.payments import (
    payment_record_capture,
    payment_refund_after_release,
    payment_refund_at_provider,
    payment_refund_book,
    payment_refund_whole,
    payment_release,
)
from tasks_market.models import Delivery, DeliveryStatus, DisputeOutcome, DisputeResolution, Task, TaskStatus
from tasks_market.models.market import task_source
from tasks_market.selectors import is_party, selected_payment, task_payments
from tasks_market.services.announcements import publish
from tasks_market.services.errors import InvalidField
from tasks_market.services.reputation import reputation_record, reputation_uncount_refunded

logger = logging.getLogger(__name__)

PARTY_REFUSED = "A party to the task (its poster or the winning agent's owner) cannot resolve its dispute."


@dataclass(frozen=True)
class Resolved:
    resolution: DisputeResolution
    task: Task
    payment: Payment


def resolution_terms(resolution: DisputeResolution) -> FeeTerms | None:
    """The fee terms the task's payment pinned at selection, for the released part's fee and net."""
    payment = task_payments(resolution.task_id).filter(fee_percent__isnull=False).first()
    return payment.pinned_terms if payment is not None else None


def resolution_data(resolution: DisputeResolution, task: Task) -> dict[str, Any]:
    split = fee_split(
        amount=resolution.release_amount, currency=resolution.currency, terms=resolution_terms(resolution)
    )
    return {
        "task_id": task.id,
        "task_status": task.status,
        "resolution_id": resolution.id,
        "outcome": resolution.outcome,
        "refund_amount": resolution.refund_amount,
        "release_amount": resolution.release_amount,
        "fee": split.fee,
        "net": split.net,
        "currency": resolution.currency,
        "note": resolution.note,
        "status": resolution.status,
    }


def dispute_resolve(
    *, task_id: UUID, outcome: str, staff_user=None, refund_amount: Decimal | None = None, note: str = ""
) -> Resolved:
    resolution, payment = _claim(task_id, outcome, refund_amount, note, staff_user)
    if resolution.status == DisputeResolution.Status.APPLYING:
        ref = _at_provider(resolution, payment)
        _record(resolution.pk, ref)
    resolution.refresh_from_db()
    return Resolved(
        resolution=resolution, task=Task.objects.get(pk=task_id), payment=Payment.objects.get(pk=payment.pk)
    )


def _amounts(outcome: str, refund_amount: Decimal | None, payment: Payment) -> tuple[Decimal, Decimal]:
    total = payment.amount
    if outcome == DisputeOutcome.REFUND_FULL:
        return total, Decimal(0)
    if outcome == DisputeOutcome.RELEASE_FULL:
        return Decimal(0), total
    if refund_amount is None:
        raise InvalidField("refund_amount", "A split needs the amount refunded to the poster.")
    refund = Decimal(refund_amount)
    # The currency's minor units (payments.money's one table): 0.5 JPY never reaches the provider
    # (docs/decisions.md#one-decimal-policy-per-currency).
    if problem := places_problem(refund, payment.currency):
        raise InvalidField("refund_amount", problem)
    if not (0 < refund < total):
        raise InvalidField("refund_amount", f"A split refunds more than 0 and less than {total} {payment.currency}.")
    return refund, total - refund


@transaction.atomic
def _claim(task_id: UUID, outcome: str, refund_amount, note: str, staff_user) -> tuple[DisputeResolution, Payment]:
    if outcome not in DisputeOutcome.values:
        raise InvalidField("outcome", f"One of {', '.join(DisputeOutcome.values)}.")
    task = Task.objects.select_for_update().filter(pk=task_id).first()
    if task is None:
        raise NotFound()
    if staff_user is not None and is_party(staff_user, task):
        raise Forbidden(PARTY_REFUSED)
    payment = selected_payment(task, lock=True)
    existing = DisputeResolution.objects.filter(task=task).first()
    if existing is not None:
        refund, _ = _amounts(outcome, refund_amount, payment) if payment else (None, None)
        if existing.outcome != outcome or (refund is not None and existing.refund_amount != refund):
            raise InvalidState(f"The dispute was already resolved differently ({existing.outcome}).")
        return existing, payment
    if task.status != TaskStatus.DISPUTED or payment is None or payment.status != PaymentStatus.SUCCEEDED:
        raise InvalidState(f"Only a disputed task with a secured payment can be resolved; the task is {task.status}.")
    refund, release = _amounts(outcome, refund_amount, payment)
    delivery = Delivery.objects.filter(task=task).first()
    resolution = DisputeResolution.objects.create(
        task=task,
        outcome=outcome,
        refund_amount=refund,
        release_amount=release,
        currency=payment.currency,
        note=note,
        reason=delivery.dispute_reason if delivery else "",
        resolved_by=staff_user,
    )
    return resolution, payment


def _at_provider(resolution: DisputeResolution, payment: Payment) -> str:
    """The provider calls, with no transaction open; answers the refund's id for the ledger ("" for none)."""
    return payment_refund_at_provider(payment, amount=resolution.refund_amount, key=f"dispute:{resolution.pk}:refund")


@transaction.atomic
def _record(resolution_pk: UUID, refund_id: str = "") -> None:
    resolution = DisputeResolution.objects.get(pk=resolution_pk)
    task = Task.objects.select_for_update().get(pk=resolution.task_id)  # the lock order: the task first
    resolution = DisputeResolution.objects.select_for_update().get(pk=resolution_pk)
    if resolution.status == DisputeResolution.Status.APPLIED:  # a twin recorded it
        return
    payment = selected_payment(task, lock=True)
    delivery = Delivery.objects.select_related("agent").get(task=task)
    now = timezone.now()
    # Only what is not booked yet: the provider's `charge.refunded` may have booked it first.
    if resolution.outcome == DisputeOutcome.REFUND_FULL:
        payment_refund_whole(payment, key=f"dispute:{resolution.pk}", provider_ref=refund_id)
        task.status, task.cancelled_at = TaskStatus.CANCELLED, task.cancelled_at or now
        task.save(update_fields=["status", "cancelled_at", "updated_at"])
    else:
        if resolution.refund_amount > 0:
            payment_record_capture(payment, now)
            payment_refund_book(
                payment, upto=resolution.refund_amount, key=f"dispute:{resolution.pk}", provider_ref=refund_id
            )
        payment_release(payment, owner_id=delivery.agent.owner_id, now=now)
        task.status, task.completed_at = TaskStatus.COMPLETED, now
        task.save(update_fields=["status", "completed_at", "updated_at"])
    # The agent's record, in this transaction (docs/decisions.md#agent-reputation).
    reputation_record(
        task=task, delivery=delivery, amount=payment.amount, currency=payment.currency, kind=resolution.outcome, now=now
    )
    if delivery.status != DeliveryStatus.DISPUTED:
        logger.warning("task %s resolved with its delivery %s", task.id, delivery.status)
    resolution.status, resolution.applied_at = DisputeResolution.Status.APPLIED, now
    resolution.save(update_fields=["status", "applied_at"])
    publish("dispute.resolved", resolution_data(resolution, task), task.poster_id, delivery.agent.owner_id)
    logger.info("dispute of task %s resolved: %s", task.id, resolution.outcome)


ADMIN_REFUND_NOTE = "Refunded in full by staff from the payments admin."


def payment_refund(*, payment_id: UUID, staff_user=None, note: str = ADMIN_REFUND_NOTE) -> Payment:
    """Staff: refund the payment of a disputed task in full. This is the dispute's `refund_full`
    resolution, claimed under the task's lock like any other (docs/decisions.md#staff-refunds-are-resolutions):
    of a refund and a resolution racing, exactly one decision applies (the other is 409 `invalid_state`,
    unless it is the same refund), and the task ends `cancelled`."""
    payment = Payment.objects.filter(pk=payment_id, source__startswith="task:").first()
    if payment is None:
        raise NotFound()
    task = Task.objects.get(pk=payment.source_id)
    existing = DisputeResolution.objects.filter(task=task).first()
    if existing is None and (task.status != TaskStatus.DISPUTED or payment.status != PaymentStatus.SUCCEEDED):
        raise InvalidState("Only the secured payment of a disputed task can be refunded.")
    if existing is not None and existing.outcome != DisputeOutcome.REFUND_FULL:
        raise InvalidState(f"The dispute was already resolved differently ({existing.outcome}).")
    resolved = dispute_resolve(task_id=task.pk, outcome=DisputeOutcome.REFUND_FULL, staff_user=staff_user, note=note)
    return resolved.payment


def payment_refund_released(*, task_id: UUID) -> Payment:
    """Staff: refund the poster in full after the task was released (docs/payouts.md#refunds-after-release):
    payments.services.payments.payment_refund_after_release, once."""
    payment = payment_refund_after_release(source=task_source(task_id))
    if payment is None:
        raise InvalidState("Only a released payment can be refunded after release.")
    if payment.status == PaymentStatus.REFUNDED:  # refunded in full: the task no longer counts
        reputation_uncount_refunded(task_id=task_id)
    return payment
