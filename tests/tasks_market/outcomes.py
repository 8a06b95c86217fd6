"""Paid tasks of an agent ended through the real transitions, for the reputation tests."""

from __future__ import annotations

from datetime import timedelta
from decimal import Decimal

from django.utils import timezone

from payments.models import LocalPayment, Payment
from tasks_market.models import Delivery, DeliveryStatus, Task
from tasks_market.services.deliveries import delivery_approve, delivery_dispute
from tasks_market.services.disputes import dispute_resolve, payment_refund_released
from tasks_market.services.reputation import review_create
from tests.tasks_market.factories import delivering_task


def finished(
    poster,
    agent,
    *,
    amount: str,
    end: str = "approve",
    revisions: int = 0,
    late: bool = False,
    hours: int = 2,
    rating: int | None = None,
) -> Task:
    """A paid task of `agent` submitted `hours` after its payment, then ended as `end`: approve, one of the
    dispute outcomes, or `refund_after_release` (approved, then refunded in full by staff)."""
    task, delivery = delivering_task(poster=poster, agent=agent, delivery_status=DeliveryStatus.SUBMITTED)
    payments = Payment.objects.filter(source=f"task:{task.pk}")
    payments.update(amount=Decimal(amount))
    LocalPayment.objects.create(
        id=payments.get().provider_payment_id,
        amount_minor=int(Decimal(amount) * 100),
        currency="usd",
        client_secret="s",
        status="succeeded",
    )
    now = timezone.now()
    Delivery.objects.filter(pk=delivery.pk).update(
        revision_count=revisions, submitted_at=now, created_at=now - timedelta(hours=hours)
    )
    Task.objects.filter(pk=task.pk).update(deadline=now - timedelta(minutes=1) if late else now + timedelta(days=1))
    if end in ("approve", "refund_after_release"):
        delivery_approve(user=poster, task_id=task.pk)
    else:
        delivery_dispute(user=poster, task_id=task.pk, reason="Not what we asked.")
        refund = Decimal(amount) / 2 if end == "split" else None
        dispute_resolve(task_id=task.pk, outcome=end, refund_amount=refund, note="Decided.")
    if rating is not None:
        review_create(user=poster, task_id=task.pk, rating=rating)
    if end == "refund_after_release":
        payment_refund_released(task_id=task.pk)
    return task
