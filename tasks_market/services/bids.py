"""Bids: place, withdraw, judge, and select (which starts the payment)."""

from __future__ import annotations

import logging
from dataclasses import dataclass
from datetime import timedelta
from decimal import Decimal
from typing import Any
from uuid import UUID

from django.conf import settings
from django.db import IntegrityError, transaction
from django.utils import timezone

from core.errors import InvalidState, NotFound
from core.providers.payments import get_payment_provider
from tasks_market import judge
from tasks_market.models import (
    Agent,
    Artefact,
    Bid,
    BidJudgement,
    BidStatus,
    JudgementStatus,
    Payment,
    PaymentStatus,
    Task,
    TaskStatus,
)
from tasks_market.models.market import LIVE_BID_STATUSES
from tasks_market.selectors import visible_tasks
from tasks_market.services.errors import BidExists, InvalidField, OwnTask
from tasks_market.services.events import bid_data, publish

logger = logging.getLogger(__name__)


@dataclass(frozen=True)
class Selection:
    task: Task
    bid: Bid
    payment: Payment


def artefact_rows(artefacts: list[dict[str, Any]], **owner) -> list[Artefact]:
    return [
        Artefact(
            position=index,
            name=item["name"],
            content_type=item["content_type"],
            url=item.get("url") or "",
            text=item.get("text") or "",
            size=item["size"],
            sha256=item["sha256"],
            **owner,
        )
        for index, item in enumerate(artefacts)
    ]


def bid_create(
    *,
    user,
    task_id: UUID,
    agent_id: UUID,
    amount: Decimal,
    currency: str,
    proposal: str,
    eta_hours: int,
    sample_artefacts: list[dict[str, Any]] | None = None,
) -> Bid:
    """An agent's owner bids on an open task: one live bid per agent and task, never on one's own task.

    The bid is judged by a Celery job after commit.
    """
    from tasks_market.tasks import judge_bid

    try:
        with transaction.atomic():
            # Locked like select and cancel do, so no bid lands on a task that just stopped being open.
            task = visible_tasks(user).select_for_update(of=("self",)).filter(id=task_id).first()
            if task is None:
                raise NotFound()
            if task.poster_id == user.pk:
                raise OwnTask()
            if task.status != TaskStatus.OPEN:
                raise InvalidState(f"Bids are taken only while a task is open; this one is {task.status}.")
            agent = Agent.objects.filter(owner=user, id=agent_id).first()
            if agent is None:
                raise InvalidField("agent_id", "You have no agent with this id.")
            if currency != task.budget_currency:
                raise InvalidField("currency", f"Bids on this task must be in {task.budget_currency}.")
            if Bid.objects.filter(task=task, agent=agent, status__in=LIVE_BID_STATUSES).exists():
                raise BidExists()
            bid = Bid.objects.create(
                task=task,
                agent=agent,
                bidder=user,
                amount=amount,
                currency=currency,
                proposal=proposal,
                eta_hours=eta_hours,
            )
            Artefact.objects.bulk_create(artefact_rows(sample_artefacts or [], bid=bid))
            BidJudgement.objects.create(bid=bid)
            publish("bid.created", bid_data(bid, task), task.poster_id, user.pk)
            transaction.on_commit(lambda: judge_bid.delay(str(bid.id)), robust=True)
    except IntegrityError as exc:  # the partial unique index: a concurrent bid of the same agent won
        raise BidExists() from exc
    return bid


@transaction.atomic
def bid_withdraw(*, user, task_id: UUID, bid_id: UUID) -> Bid:
    """The bidder takes back a pending bid (a selected one is in the payment flow and cannot be)."""
    Task.objects.select_for_update().filter(id=task_id).first()
    bid = Bid.objects.select_for_update().filter(id=bid_id, task_id=task_id, bidder=user).first()
    if bid is None:
        raise NotFound()
    if bid.status != BidStatus.PENDING:
        raise InvalidState(f"Only a pending bid can be withdrawn; this one is {bid.status}.")
    bid.status = BidStatus.WITHDRAWN
    bid.save(update_fields=["status", "updated_at"])
    return bid


def bid_judge(*, bid_id: UUID | str) -> BidJudgement | None:
    """Compute a pending judgement (tasks_market.judge). Running it twice computes it once."""
    judgement = BidJudgement.objects.select_related("bid__task", "bid__agent").filter(bid_id=bid_id).first()
    if judgement is None or judgement.status != JudgementStatus.PENDING:
        return judgement
    bid = judgement.bid
    score, criteria = judge.evaluate(task=bid.task, bid=bid, agent_benchmark_score=bid.agent.benchmark_score)
    BidJudgement.objects.filter(bid_id=bid_id, status=JudgementStatus.PENDING).update(
        status=JudgementStatus.COMPLETED,
        score=score,
        criteria=criteria,
        method=judge.METHOD,
        evaluated_at=timezone.now(),
    )
    return BidJudgement.objects.get(bid_id=bid_id)


def judgements_catch_up(*, older_than: timedelta | None = None, limit: int = 500) -> int:
    """Judge bids whose queued judge job was lost (the broker was down at commit). Returns how many.

    Pending for longer than `older_than` (default: settings.JUDGEMENT_CATCH_UP_AFTER_SECONDS) counts as lost.
    """
    if older_than is None:
        older_than = timedelta(seconds=settings.JUDGEMENT_CATCH_UP_AFTER_SECONDS)
    cutoff = timezone.now() - older_than
    overdue = BidJudgement.objects.filter(status=JudgementStatus.PENDING, created_at__lt=cutoff)
    bid_ids = list(overdue.values_list("bid_id", flat=True)[:limit])
    for bid_id in bid_ids:
        bid_judge(bid_id=bid_id)
    return len(bid_ids)


@transaction.atomic
def bid_select(*, user, task_id: UUID, bid_id: UUID, success_url: str = "", cancel_url: str = "") -> Selection:
    """The poster selects a pending bid of an open task; a payment for it is created at the provider.

    The provider's checkout page (`checkout_url`) shows the task and the agent being paid, and links
    back to `success_url` / `cancel_url` when given.

    The task row is locked first, so of any concurrent selects of one task exactly one finds it
    open; the others find it awaiting payment (409). Selecting the selected bid again answers with
    the same payment.
    """
    task = Task.objects.select_for_update().filter(id=task_id, poster=user).first()
    if task is None:
        raise NotFound()
    bid = Bid.objects.select_related("agent").filter(id=bid_id, task=task).first()
    if bid is None:
        raise NotFound()
    if bid.status == BidStatus.SELECTED and task.selected_bid_id == bid.id:
        payment = Payment.objects.filter(bid=bid).order_by("-created_at").first()
        if payment is not None:
            return Selection(task, bid, payment)
    if task.status != TaskStatus.OPEN:
        raise InvalidState(f"A bid can be selected only while the task is open; this one is {task.status}.")
    if bid.status != BidStatus.PENDING:
        raise InvalidState(f"Only a pending bid can be selected; this one is {bid.status}.")

    provider = get_payment_provider()
    created = provider.create_payment(
        amount=bid.amount,
        currency=bid.currency,
        metadata={"task_id": str(task.id), "bid_id": str(bid.id)},
        description=f"Task: {task.title}"[:500],
        payee=f"Agent {bid.agent.name}"[:200],
        success_url=success_url,
        cancel_url=cancel_url,
    )
    payment = Payment.objects.create(
        task=task,
        bid=bid,
        provider=provider.name,
        provider_payment_id=created.id,
        amount=created.amount,
        currency=created.currency,
        status=created.status if created.status in PaymentStatus.values else PaymentStatus.REQUIRES_PAYMENT,
        client_secret=created.client_secret,
        checkout_url=created.checkout_url,
    )
    bid.status = BidStatus.SELECTED
    bid.save(update_fields=["status", "updated_at"])
    task.status = TaskStatus.AWAITING_PAYMENT
    task.selected_bid = bid
    task.save(update_fields=["status", "selected_bid", "updated_at"])
    publish("bid.selected", {**bid_data(bid, task), "payment_id": payment.id}, task.poster_id, bid.bidder_id)
    logger.info("bid %s selected on task %s; payment %s", bid.id, task.id, payment.provider_payment_id)
    return Selection(task, bid, payment)
