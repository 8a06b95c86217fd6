"""Deliveries: the winning agent's owner submits; the poster approves, disputes or asks for a revision.

Every function locks the task row first (the order select, cancel and the payment events use too)
and checks both the task's and the delivery's state before changing either.
"""

from __future__ import annotations

import logging
from datetime import timedelta
from typing import Any
from uuid import UUID

from django.conf import settings
from django.db import transaction
from django.db.models import Q
from django.utils import timezone

from core.http.errors import InvalidState, NotFound, ProviderError, ProviderUnavailable
from payments.models import Payment, PaymentStatus
from payments.services.payments import payment_capture_at_provider, payment_release
from tasks_market.models import (
    Artefact,
    Delivery,
    DeliveryStatus,
    DeliverySubmission,
    Task,
    TaskStatus,
)
from tasks_market.models.deliveries import MAX_REVISIONS
from tasks_market.models.market import bid_reference
from tasks_market.models.reputation import OutcomeKind
from tasks_market.selectors import delivery_by_id, task_payments
from tasks_market.services.announcements import delivery_data, publish
from tasks_market.services.bids import artefact_rows
from tasks_market.services.dispatch import enqueue_dispatch, retry_claim
from tasks_market.services.reputation import reputation_record

logger = logging.getLogger(__name__)

# The agent may submit as soon as it has the task, even before its endpoint's answer is recorded.
SUBMITTABLE = (
    DeliveryStatus.PENDING,
    DeliveryStatus.DISPATCHED,
    DeliveryStatus.REVISION_REQUESTED,
    DeliveryStatus.FAILED,
)


def _locked_for_poster(user, task_id: UUID) -> tuple[Task, Delivery | None]:
    task = Task.objects.select_for_update().filter(id=task_id, poster=user).first()
    if task is None:
        raise NotFound()
    return task, Delivery.objects.select_for_update(of=("self",)).select_related("agent").filter(task=task).first()


def _review_target(user, task_id: UUID) -> tuple[Task, Delivery]:
    task, delivery = _locked_for_poster(user, task_id)
    if task.status != TaskStatus.IN_REVIEW or delivery is None or delivery.status != DeliveryStatus.SUBMITTED:
        raise InvalidState(f"Only a submitted delivery can be reviewed; the task is {task.status}.")
    return task, delivery


def _announce(event_type: str, delivery: Delivery, task: Task, **extra: Any) -> None:
    publish(event_type, delivery_data(delivery, task, **extra), task.poster_id, delivery.agent.owner_id)


@transaction.atomic
def delivery_submit(*, user, task_id: UUID, artefacts: list[dict[str, Any]], notes: str = "") -> Delivery:
    """The winning agent's owner hands in the result: the delivery is submitted, the task in review."""
    task = Task.objects.select_for_update().filter(id=task_id).first()
    delivery = (
        Delivery.objects.select_for_update(of=("self",))
        .select_related("agent")
        .filter(task_id=task_id, agent__owner=user)
        .first()
        if task is not None
        else None
    )
    if delivery is None:
        raise NotFound()
    if task.status != TaskStatus.DELIVERING or delivery.status not in SUBMITTABLE:
        raise InvalidState(f"Nothing to submit: the task is {task.status} and its delivery {delivery.status}.")
    now = timezone.now()
    number = DeliverySubmission.objects.filter(delivery=delivery).count() + 1
    submission = DeliverySubmission.objects.create(delivery=delivery, number=number, notes=notes, submitted_by=user)
    Artefact.objects.bulk_create(artefact_rows(artefacts, submission=submission))
    delivery.status, delivery.submitted_at, delivery.last_error = DeliveryStatus.SUBMITTED, now, ""
    delivery.save(update_fields=["status", "submitted_at", "last_error", "updated_at"])
    task.status = TaskStatus.IN_REVIEW
    task.save(update_fields=["status", "updated_at"])
    _announce("delivery.submitted", delivery, task, submission_number=number)
    return delivery


def delivery_approve(*, user, task_id: UUID) -> Delivery:
    """The poster accepts the work: the seller's net becomes an earning, the task completed
    (docs/payouts.md#release).

    The money was captured when the poster paid, so approving never charges the card again. A payment
    still held for approval (made before payments were captured at once) is captured here, and as with
    select no lock is held across that provider call:

    1. Claim, in one short transaction under the task's lock: the submitted delivery becomes approved
       (a concurrent dispute, revision request or review-window release now finds nothing to do).
    2. Only for a held payment: capture it at the provider, with no transaction open. Capturing is
       idempotent at both providers, so a repeat approve while the claim stands does steps 2 and 3 itself.
    3. Record, once: the payment released, the earning and its ledger lines, the task completed,
       `delivery.approved` announced. When the provider failed instead, the claim is given back (the
       delivery submitted again) and the caller gets the provider's 502/503.
    """
    delivery, payment = _claim_approval(user, task_id)
    _capture_held(delivery, payment)
    return _record_approval(task_id, payment, poster=user)


def _capture_held(delivery: Delivery, payment: Payment) -> None:
    try:
        payment_capture_at_provider(payment)
    except Exception:  # the provider's 502/503, or anything else: the approval did not happen
        _give_back_approval(delivery)
        raise


def deliveries_release_due(*, now=None, limit: int = 200) -> int:
    """Beat: release every delivery submitted REVIEW_WINDOW_HOURS ago with no approve, revision request
    or dispute since, as an approval would (announced `delivery.approved` with `auto: true`). Safe to
    run twice and beside a poster's approve: the claim under the task's lock lets exactly one through."""
    now = now or timezone.now()
    cutoff = now - timedelta(hours=settings.REVIEW_WINDOW_HOURS)
    due = list(
        Delivery.objects.filter(
            status=DeliveryStatus.SUBMITTED, submitted_at__lte=cutoff, task__status=TaskStatus.IN_REVIEW
        ).values_list("task_id", flat=True)[:limit]
    )
    released = 0
    for task_id in due:
        try:
            if delivery_release_auto(task_id=task_id, cutoff=cutoff) is not None:
                released += 1
        except (InvalidState, ProviderError, ProviderUnavailable):
            logger.warning("review-window release of task %s failed; the next run retries", task_id, exc_info=True)
    return released


def delivery_release_auto(*, task_id: UUID, cutoff) -> Delivery | None:
    """Release one task whose review window is over; None when it is no longer due (approved, disputed,
    revised or resubmitted meanwhile)."""
    with transaction.atomic():
        task, delivery = _locked(task_id)
        if (
            task.status != TaskStatus.IN_REVIEW
            or delivery is None
            or delivery.status != DeliveryStatus.SUBMITTED
            or delivery.submitted_at is None
            or delivery.submitted_at > cutoff
        ):
            return None
        payment = _secured_payment(task, delivery)
        delivery.status, delivery.reviewed_at = DeliveryStatus.APPROVED, timezone.now()
        delivery.save(update_fields=["status", "reviewed_at", "updated_at"])
    _capture_held(delivery, payment)
    return _record_approval(task_id, payment, auto=True)


def _locked(task_id: UUID, poster=None) -> tuple[Task, Delivery | None]:
    rows = Task.objects.select_for_update().filter(id=task_id)
    task = (rows.filter(poster=poster) if poster is not None else rows).first()
    if task is None:
        raise NotFound()
    return task, Delivery.objects.select_for_update(of=("self",)).select_related("agent").filter(task=task).first()


def _secured_payment(task: Task, delivery: Delivery) -> Payment:
    payment = (
        task_payments(task.pk)
        .select_for_update()
        .filter(reference=bid_reference(delivery.bid_id), status=PaymentStatus.SUCCEEDED)
        .first()
    )
    if payment is None:
        raise InvalidState("The task has no secured payment to release.")
    return payment


@transaction.atomic
def _claim_approval(user, task_id: UUID) -> tuple[Delivery, Payment]:
    task, delivery = _locked_for_poster(user, task_id)
    claimable = delivery is not None and delivery.status in (DeliveryStatus.SUBMITTED, DeliveryStatus.APPROVED)
    if task.status != TaskStatus.IN_REVIEW or not claimable:
        raise InvalidState(f"Only a submitted delivery can be reviewed; the task is {task.status}.")
    payment = _secured_payment(task, delivery)
    if delivery.status == DeliveryStatus.SUBMITTED:
        delivery.status, delivery.reviewed_at = DeliveryStatus.APPROVED, timezone.now()
        delivery.save(update_fields=["status", "reviewed_at", "updated_at"])
    return delivery, payment


def _give_back_approval(delivery: Delivery) -> None:
    """The capture failed: the delivery is submitted again, unless a twin request completed the task."""
    with transaction.atomic():
        Task.objects.select_for_update().filter(pk=delivery.task_id).first()  # the lock order: the task first
        Delivery.objects.filter(
            pk=delivery.pk, status=DeliveryStatus.APPROVED, task__status=TaskStatus.IN_REVIEW
        ).update(status=DeliveryStatus.SUBMITTED, reviewed_at=None, updated_at=timezone.now())


@transaction.atomic
def _record_approval(task_id: UUID, payment: Payment, *, poster=None, auto: bool = False) -> Delivery:
    task, delivery = _locked(task_id, poster)
    if task.status == TaskStatus.COMPLETED:  # a twin request (or the review-window job) recorded it first
        return delivery
    payment = Payment.objects.select_for_update().get(pk=payment.pk)
    if task.status != TaskStatus.IN_REVIEW or delivery is None or payment.status != PaymentStatus.SUCCEEDED:
        # Only a failed twin's give-back and a dispute after it can get here: money captured for work
        # the poster then disputed. Staff must look.
        logger.error("payment %s captured but task %s is %s: needs attention", payment.id, task.id, task.status)
        raise InvalidState(f"The task changed while its payment was captured; it is {task.status}.")
    now = timezone.now()
    payment_release(payment, owner_id=delivery.agent.owner_id, now=now)
    if delivery.status != DeliveryStatus.APPROVED:  # given back by a failed twin meanwhile
        delivery.status, delivery.reviewed_at = DeliveryStatus.APPROVED, now
        delivery.save(update_fields=["status", "reviewed_at", "updated_at"])
    task.status, task.completed_at = TaskStatus.COMPLETED, now
    task.save(update_fields=["status", "completed_at", "updated_at"])
    # The agent's record, in this transaction (docs/decisions.md#agent-reputation).
    reputation_record(
        task=task,
        delivery=delivery,
        amount=payment.amount,
        currency=payment.currency,
        kind=OutcomeKind.APPROVED,
        now=now,
    )
    extra = {"auto": True} if auto else {}
    _announce("delivery.approved", delivery, task, payment_id=payment.id, **extra)
    return delivery


@transaction.atomic
def delivery_dispute(*, user, task_id: UUID, reason: str) -> Delivery:
    """The poster rejects the work; the payment stays secured until staff resolve the dispute."""
    task, delivery = _review_target(user, task_id)
    now = timezone.now()
    delivery.status, delivery.reviewed_at, delivery.dispute_reason = DeliveryStatus.DISPUTED, now, reason
    delivery.save(update_fields=["status", "reviewed_at", "dispute_reason", "updated_at"])
    task.status = TaskStatus.DISPUTED
    task.save(update_fields=["status", "updated_at"])
    _announce("delivery.disputed", delivery, task, reason=reason)
    return delivery


@transaction.atomic
def delivery_request_revision(*, user, task_id: UUID, feedback: str) -> Delivery:
    """The poster asks for changes (at most MAX_REVISIONS times); the task is dispatched again with the feedback."""
    task, delivery = _review_target(user, task_id)
    if delivery.revision_count >= MAX_REVISIONS:
        raise InvalidState(f"At most {MAX_REVISIONS} revisions can be requested; approve or dispute the delivery.")
    now = timezone.now()
    latest = DeliverySubmission.objects.filter(delivery=delivery).order_by("-number").first()
    if latest is not None:
        DeliverySubmission.objects.filter(pk=latest.pk).update(feedback=feedback)
    delivery.status = DeliveryStatus.REVISION_REQUESTED
    delivery.revision_count += 1
    delivery.feedback = feedback
    delivery.reviewed_at = now
    delivery.round += 1
    delivery.round_attempts = 0
    delivery.next_attempt_at = now
    delivery.save(
        update_fields=[
            "status",
            "revision_count",
            "feedback",
            "reviewed_at",
            "round",
            "round_attempts",
            "next_attempt_at",
            "updated_at",
        ]
    )
    task.status = TaskStatus.DELIVERING
    task.save(update_fields=["status", "updated_at"])
    _announce("delivery.revision_requested", delivery, task, feedback=feedback)
    enqueue_dispatch(delivery.id)
    return delivery


@transaction.atomic
def delivery_retry(*, task_id: UUID, user=None, now=None) -> Delivery:
    """Retry the dispatch (docs/decisions.md#states): the poster or the winning agent's owner (`user=None`: staff).

    202 material when the delivery is pending or failed, or dispatched and stuck past
    DELIVERY_STUCK_AFTER_SECONDS; otherwise InvalidState (409). A new attempt is queued under the claim.
    """
    now = now or timezone.now()
    rows = Delivery.objects.filter(task_id=task_id)
    if user is not None:
        rows = rows.filter(Q(task__poster=user) | Q(agent__owner=user))
    delivery = rows.first()
    if delivery is None:
        if user is not None and not Task.objects.filter(id=task_id, poster=user).exists():
            raise NotFound()
        raise InvalidState("The task has no delivery to retry yet.")
    if not retry_claim(delivery_id=delivery.pk, now=now):
        raise InvalidState(
            f"A delivery can be retried when it is pending or failed, or dispatched more than "
            f"{_minutes()} minutes ago without a result, and no attempt is in progress; this one is {delivery.status}."
        )
    return delivery_by_id(delivery.pk)


def _minutes() -> int:
    return settings.DELIVERY_STUCK_AFTER_SECONDS // 60
