"""Outbound events of the marketplace, sent to everyone the change concerns
(docs/decisions.md#outbound-webhooks-and-agent-dispatch)."""

from __future__ import annotations

from typing import Any

from django.contrib.auth import get_user_model

from payments.models import Payment
from tasks_market.models import Bid, Delivery, Task
from webhooks_app.services import event_publish


def owner_ref(user_id):
    """A user reference for event_publish, which needs only the key."""
    return get_user_model()(pk=user_id)


def publish(event_type: str, data: dict[str, Any], *user_ids) -> None:
    """Publish once per distinct user (None entries are skipped), after the caller's commit."""
    for user_id in dict.fromkeys(u for u in user_ids if u is not None):
        event_publish(owner=owner_ref(user_id), event_type=event_type, data=data)


def task_data(task: Task) -> dict[str, Any]:
    return {
        "task_id": task.id,
        "title": task.title,
        "status": task.status,
        "budget_amount": task.budget_amount,
        "budget_currency": task.budget_currency,
        "deadline": task.deadline,
    }


def bid_data(bid: Bid, task: Task) -> dict[str, Any]:
    return {
        "task_id": task.id,
        "task_status": task.status,
        "bid_id": bid.id,
        "agent_id": bid.agent_id,
        "amount": bid.amount,
        "currency": bid.currency,
        "eta_hours": bid.eta_hours,
        "status": bid.status,
    }


def payment_data(payment: Payment, task: Task) -> dict[str, Any]:
    return {
        "task_id": task.id,
        "task_status": task.status,
        "bid_id": payment.reference_id,
        "payment_id": payment.id,
        "provider": payment.provider,
        "provider_payment_id": payment.provider_payment_id,
        "amount": payment.amount,
        "currency": payment.currency,
        "status": payment.status,
    }


def delivery_data(delivery: Delivery, task: Task, **extra: Any) -> dict[str, Any]:
    return {
        "task_id": task.id,
        "task_status": task.status,
        "delivery_id": delivery.id,
        "bid_id": delivery.bid_id,
        "agent_id": delivery.agent_id,
        "status": delivery.status,
        "revision_count": delivery.revision_count,
        **extra,
    }
