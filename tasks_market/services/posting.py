"""Posting tasks: create, remix, cancel (the marketplace's `Task`; the Celery jobs are tasks_market/tasks.py)."""

from __future__ import annotations

import logging
from datetime import datetime
from decimal import Decimal
from typing import Any
from uuid import UUID

from django.db import transaction
from django.db.models import Q
from django.utils import timezone

from core.http.errors import InvalidState, NotFound
from payments.models import PaymentStatus
from payments.providers import get_payment_provider
from payments.services.payments import payment_cancel_waiting
from tasks_market.models import Task, TaskStatus
from tasks_market.models.market import check_amount_places
from tasks_market.selectors import task_payments
from tasks_market.services.announcements import publish, task_data
from tasks_market.services.cancels import task_cancel_locked
from tasks_market.services.errors import InvalidField
from tasks_market.services.paid_cancel import task_cancel_paid
from tasks_market.services.saved_searches import task_opened

logger = logging.getLogger(__name__)

COPIED_FIELDS = ("title", "description", "budget_amount", "budget_currency", "deadline", "category", "requirements")


@transaction.atomic
def task_create(
    *,
    poster,
    title: str,
    description: str,
    budget_amount: Decimal,
    budget_currency: str,
    deadline: datetime,
    category: str,
    requirements: list[str],
    remixed_from: Task | None = None,
) -> Task:
    task = Task.objects.create(
        poster=poster,
        title=title,
        description=description,
        budget_amount=budget_amount,
        budget_currency=budget_currency,
        deadline=deadline,
        category=category,
        requirements=list(requirements),
        remixed_from=remixed_from,
    )
    publish("task.created", {**task_data(task), "remixed_from": task.remixed_from_id}, poster.pk)
    task_opened(task.pk)
    return task


def task_remix(*, user, task_id: UUID, overrides: dict[str, Any]) -> Task:
    """A new open task copied from one of the caller's tasks or from any open task, with `overrides`."""
    source = Task.objects.filter(Q(poster=user) | Q(status=TaskStatus.OPEN), id=task_id).first()
    if source is None:
        raise NotFound()
    fields = {name: overrides.get(name, getattr(source, name)) for name in COPIED_FIELDS}
    if fields["deadline"] <= timezone.now():
        raise InvalidField("deadline", "The copied deadline has passed; give a new deadline.")
    problem = check_amount_places(fields["budget_amount"], fields["budget_currency"])
    if problem:
        raise InvalidField("budget_amount", problem)
    return task_create(poster=user, remixed_from=source, **fields)


CANCEL_ROUNDS = 3  # how often a cancel goes back to the provider for a payment created meanwhile


def task_cancel(*, task_id: UUID, poster=None) -> Task:
    """Cancel an open task, or one awaiting payment (its payment is cancelled at the provider first), or a
    paid one whose delivery is overdue (refunded in full: tasks_market.services.paid_cancel).

    `poster=None` is staff acting from the admin. Live bids become rejected.

    No lock is held across the provider call: the payments still waiting for the customer are
    cancelled at the provider first, with no transaction open (cancelling is idempotent at both
    providers, and a cancelled payment can never succeed), then one short transaction locks the task,
    checks it again and records the cancel. A payment that appeared meanwhile (a select that was
    still talking to the provider) is cancelled in another round; a provider failure changes nothing
    here and reaches the caller as its 502/503.
    """
    found = Task.objects.filter(id=task_id, **({"poster": poster} if poster is not None else {})).first()
    if found is not None and found.status in (TaskStatus.DELIVERING, TaskStatus.IN_REVIEW):
        return task_cancel_paid(task_id=task_id, poster=poster)
    for _ in range(CANCEL_ROUNDS):
        task = _cancellable(Task.objects.filter(id=task_id), poster)
        waiting = set(
            task_payments(task.pk)
            .filter(status=PaymentStatus.REQUIRES_PAYMENT)
            .values_list("provider_payment_id", flat=True)
        )
        if waiting:
            provider = get_payment_provider()
            for provider_payment_id in sorted(waiting):
                provider.cancel_payment(provider_payment_id)
        cancelled = _record_cancel(task_id, poster, waiting)
        if cancelled is not None:
            return cancelled
    raise InvalidState("The task's payment changed while it was being cancelled; try again.")


def _cancellable(rows, poster) -> Task:
    task = (rows.filter(poster=poster) if poster is not None else rows).first()
    if task is None:
        raise NotFound()
    if task.status not in (TaskStatus.OPEN, TaskStatus.AWAITING_PAYMENT):
        raise InvalidState(f"Only an open task or one awaiting payment can be cancelled; this one is {task.status}.")
    return task


@transaction.atomic
def _record_cancel(task_id: UUID, poster, cancelled_at_provider: set[str]) -> Task | None:
    """The cancel itself, under the task's lock; None when a payment not cancelled at the provider yet
    is waiting (the caller cancels it and comes back)."""
    task = _cancellable(Task.objects.select_for_update().filter(id=task_id), poster)
    waiting = list(task_payments(task.pk).select_for_update().filter(status=PaymentStatus.REQUIRES_PAYMENT))
    if any(payment.provider_payment_id not in cancelled_at_provider for payment in waiting):
        return None
    for payment in waiting:
        payment_cancel_waiting(payment)
    return task_cancel_locked(task)
