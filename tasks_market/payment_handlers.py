"""The marketplace's part in payments (registered from TasksMarketConfig.ready()): what a task's payment
means for the task. payments applies the provider's events to the payment and tells this source
(tasks_market.services.payments.TaskPayments, docs/architecture.md#payment-events).

A task a payment was made for is never deleted (docs/decisions.md#money-rows-are-never-deleted): payments
name it by a source string, not a foreign key the database could protect, so the delete is refused here,
for the task's own delete and for one that cascades from its poster's."""

from __future__ import annotations

from django.db.models import ProtectedError
from django.db.models.signals import pre_delete

from payments.registry import payment_source_register
from tasks_market.models import Task
from tasks_market.selectors import task_payments
from tasks_market.services.payments import TaskPayments

payment_source_register("task", TaskPayments())


def _refuse_a_paid_tasks_delete(sender, instance: Task, **kwargs) -> None:
    payments = task_payments(instance.pk)
    if payments.exists():
        raise ProtectedError(f"Task {instance.pk} has payments, which are never deleted.", set(payments))


pre_delete.connect(_refuse_a_paid_tasks_delete, sender=Task, dispatch_uid="tasks_market.paid_task_kept")
