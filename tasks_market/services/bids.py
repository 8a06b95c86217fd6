"""Bids: place, withdraw, judge, and select (which starts the payment)."""

from __future__ import annotations

import logging
from dataclasses import dataclass
from datetime import timedelta
from decimal import Decimal
from typing import Any
from uuid import UUID

from django.conf import settings
from django.db import DatabaseError, IntegrityError, transaction
from django.utils import timezone

from core.http.errors import InvalidState, NotFound
from core.ops.enqueue import enqueue_after_commit
from payments.fees import fee_terms
from payments.models import Payment, PaymentStatus
from payments.providers import ProviderPayment, get_payment_provider
from payments.services.payments import payment_record
from tasks_market.models import (
    Agent,
    Artefact,
    Bid,
    BidJudgement,
    BidStatus,
    JudgementStatus,
    Task,
    TaskStatus,
)
from tasks_market.models.market import (
    LIVE_BID_STATUSES,
    bid_reference,
    check_amount_places,
    check_currency,
    task_source,
)
from tasks_market.selectors import visible_tasks
from tasks_market.services import judging
from tasks_market.services.announcements import bid_data, publish
from tasks_market.services.errors import BidExists, InvalidField, OwnTask
from tasks_market.services.paid_cancel import bid_withdraw_paid
from tasks_market.services.saved_searches import task_opened

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
    try:
        with transaction.atomic():
            # Locked like select and cancel do, so no bid lands on a task that just stopped being open.
            task = (
                visible_tasks(user).select_for_update(of=("self",)).select_related("poster").filter(id=task_id).first()
            )
            if task is None:
                raise NotFound()
            if task.poster_id == user.pk:
                raise OwnTask()
            if task.status != TaskStatus.OPEN:
                raise InvalidState(f"Bids are taken only while a task is open; this one is {task.status}.")
            if not task.poster.is_active:  # posted while its poster's account was closing, so not cancelled by it
                raise InvalidState("The task's poster closed their account; it takes no bids.")
            agent = Agent.objects.filter(owner=user, id=agent_id).first()
            if agent is None:
                raise InvalidField("agent_id", "You have no agent with this id.")
            if currency != task.budget_currency:
                raise InvalidField("currency", f"Bids on this task must be in {task.budget_currency}.")
            if problem := check_currency(currency):  # docs/decisions.md#settlement-currencies
                raise InvalidField("currency", problem)
            if problem := check_amount_places(amount, currency):  # docs/decisions.md#one-decimal-policy-per-currency
                raise InvalidField("amount", problem)
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
            # Not sent (broker down): judgements_catch_up judges it from the beat.
            enqueue_after_commit("tasks_market.tasks.judge_bid", str(bid.id))
    except IntegrityError as exc:  # the partial unique index: a concurrent bid of the same agent won
        raise BidExists() from exc
    return bid


def bid_withdraw(*, user, task_id: UUID, bid_id: UUID) -> Bid:
    """The bidder takes back a pending bid, or gives up the paid task of its selected bid (the poster is
    refunded in full: tasks_market.services.paid_cancel). A selection still awaiting payment cannot be.

    One conditional UPDATE: a withdraw racing a select of the same bid is decided by whichever
    moves the bid off `pending` first.
    """
    rows = Bid.objects.filter(id=bid_id, task_id=task_id, bidder=user)
    if not rows.filter(status=BidStatus.PENDING).update(status=BidStatus.WITHDRAWN, updated_at=timezone.now()):
        bid = rows.select_related("task").first()
        if bid is None:
            raise NotFound()
        if bid.status == BidStatus.SELECTED and bid.task.status in (TaskStatus.DELIVERING, TaskStatus.IN_REVIEW):
            return bid_withdraw_paid(user=user, task_id=task_id, bid_id=bid_id)
        raise InvalidState(
            f"Only a pending bid, or the selected bid of a paid task, can be withdrawn; this one is {bid.status}."
        )
    return rows.get()


def bid_judge(*, bid_id: UUID | str) -> BidJudgement | None:
    """Compute a pending judgement (tasks_market.services.judging). Running it twice computes it once."""
    judgement = BidJudgement.objects.select_related("bid__task", "bid__agent").filter(bid_id=bid_id).first()
    if judgement is None or judgement.status != JudgementStatus.PENDING:
        return judgement
    bid = judgement.bid
    score, criteria = judging.evaluate(task=bid.task, bid=bid, agent_benchmark_score=bid.agent.benchmark_score)
    BidJudgement.objects.filter(bid_id=bid_id, status=JudgementStatus.PENDING).update(
        status=JudgementStatus.COMPLETED,
        score=score,
        criteria=criteria,
        method=judging.METHOD,
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


def bid_select(*, user, task_id: UUID, bid_id: UUID, success_url: str = "", cancel_url: str = "") -> Selection:
    """The poster selects a pending bid of an open task; a payment for it is created at the provider.

    The provider's checkout page (`checkout_url`) shows the task and the agent being paid, and links back
    to `success_url` / `cancel_url` when given.

    Three steps, and no lock is held across the provider call:

    1. Claim, in one short transaction of conditional UPDATEs: the task open → awaiting_payment with
       this bid, the bid pending → selected. Of concurrent selects of one task exactly one claims and
       the others answer 409; the row counts decide, on SQLite as on PostgreSQL.
    2. Create the payment at the provider, outside any transaction, under an idempotency key derived
       from the selection (`selection_key`): however often this selection is retried (a timeout, a
       crash before step 3, a repeat select), the provider answers with the same payment.
    3. Record it: one Payment per provider payment, and `bid.selected` is announced. When the provider
       failed instead, the claim is released (task open, bid pending, nothing else changed) and the
       caller gets the provider's 502 or 503.

    Selecting the selected bid again answers with the same payment. While the claim exists but its
    payment is not recorded yet (the claiming request is at step 2, or died there), a repeat select
    does steps 2 and 3 itself under the same key: it answers 200 with the same payment, recorded once.
    """
    task, bid = _select_target(user, task_id, bid_id)
    claimed = False
    if not _is_selected(task, bid):
        claimed = _claim(task, bid)
        task, bid = _select_target(user, task_id, bid_id)  # as the claim left them, or as whoever won did
        if not claimed and not _is_selected(task, bid):  # not selectable, or another bid won (a twin is fine)
            raise _not_selectable(task, bid)
    if not claimed:
        payment = _selection_payment(task, bid)
        if payment is not None:
            return Selection(task, bid, payment)

    provider = get_payment_provider()
    try:
        created = provider.create_payment(
            amount=bid.amount,
            currency=bid.currency,
            metadata={"task_id": str(task.id), "bid_id": str(bid.id)},
            idempotency_key=selection_key(bid),
            description=f"Task: {task.title}"[:500],
            payee=f"Agent {bid.agent.name}"[:200],
            success_url=success_url,
            cancel_url=cancel_url,
        )
    except Exception:  # the provider's 502/503, or anything else: the request changes nothing
        selection = _release(task, bid) if claimed else None
        if selection is not None:  # a repeat select recorded the payment meanwhile
            return selection
        raise
    return _record(task, bid, provider.name, created)


def selection_key(bid: Bid) -> str:
    """The provider idempotency key of the bid's current selection: `bid-select:<bid id>:<n>`.

    n counts the bid's payments of earlier selections: those no longer waiting for the customer (a
    selection's own payment waits until the selection is over). So n is the same for every request of
    one selection, before and after its payment is recorded, and a selection after a failed payment
    gets a new one. A selection given back after a provider failure keeps its key: selecting the bid
    again picks up the provider's payment if the failed call had made one after all.
    """
    earlier = (
        Payment.objects.filter(reference=bid_reference(bid.id)).exclude(status=PaymentStatus.REQUIRES_PAYMENT).count()
    )
    return f"bid-select:{bid.id}:{earlier}"


def _select_target(user, task_id: UUID, bid_id: UUID) -> tuple[Task, Bid]:
    task = Task.objects.filter(id=task_id, poster=user).first()
    bid = Bid.objects.select_related("agent").filter(id=bid_id, task=task).first() if task is not None else None
    if bid is None:
        raise NotFound()
    return task, bid


def _is_selected(task: Task, bid: Bid) -> bool:
    return bid.status == BidStatus.SELECTED and task.selected_bid_id == bid.id


def _not_selectable(task: Task, bid: Bid) -> InvalidState:
    if bid.status == BidStatus.PENDING and not Bid.objects.filter(pk=bid.pk, bidder__is_active=True).exists():
        return InvalidState("The bidder's account is closed; the bid cannot be selected.")
    if task.status == TaskStatus.OPEN and bid.status == BidStatus.PENDING:
        return InvalidState("The selection was given back while its payment was being created; select the bid again.")
    if task.status != TaskStatus.OPEN:
        return InvalidState(f"A bid can be selected only while the task is open; this one is {task.status}.")
    return InvalidState(f"Only a pending bid can be selected; this one is {bid.status}.")


def _selection_payment(task: Task, bid: Bid) -> Payment | None:
    """The payment of the selected bid's selection: the one waiting for the customer while the task
    awaits payment, the one that paid once it has moved on. None while it is being created."""
    payments = Payment.objects.filter(reference=bid_reference(bid.id)).order_by("-created_at")
    if task.status == TaskStatus.AWAITING_PAYMENT:
        return payments.filter(status=PaymentStatus.REQUIRES_PAYMENT).first()
    paid = (PaymentStatus.SUCCEEDED, PaymentStatus.RELEASED, PaymentStatus.REFUNDED)
    return payments.filter(status__in=paid).first()


class _ClaimLost(Exception):
    pass


def _claim(task: Task, bid: Bid) -> bool:
    """Step 1: task open → awaiting_payment with this bid, bid pending → selected; False if either moved."""
    if task.status != TaskStatus.OPEN or bid.status != BidStatus.PENDING:
        return False  # no need to ask the database (the caller reads both again before it answers)
    now = timezone.now()
    try:
        with transaction.atomic():
            if not Task.objects.filter(pk=task.pk, status=TaskStatus.OPEN).update(
                status=TaskStatus.AWAITING_PAYMENT, selected_bid=bid, updated_at=now
            ):
                return False
            # Of an active bidder: a bid placed while its account was closing escaped the close's withdraw.
            if not Bid.objects.filter(pk=bid.pk, task=task, status=BidStatus.PENDING, bidder__is_active=True).update(
                status=BidStatus.SELECTED, updated_at=now
            ):
                raise _ClaimLost()  # withdrawn meanwhile: give the task back
    except _ClaimLost:
        return False
    return True


def _release(task: Task, bid: Bid) -> Selection | None:
    """The provider failed: the task is open again and the bid pending, unless the payment got recorded.

    If even that cannot be written (the database is gone), the claim stays; the poster's next select
    of the bid completes it under the same key, and cancelling the task clears it.
    """
    try:
        return _release_claim(task, bid)
    except DatabaseError:
        logger.exception("could not release the selection of bid %s on task %s", bid.id, task.id)
        return None


def _release_claim(task: Task, bid: Bid) -> Selection | None:
    with transaction.atomic():
        # The task row first (as record, cancel and the payment events take it), so release and record
        # of one selection never interleave.
        locked = Task.objects.select_for_update().get(pk=task.pk)
        current = Bid.objects.get(pk=bid.pk)
        payment = _selection_payment(locked, current) if _is_selected(locked, current) else None
        if payment is not None:
            return Selection(locked, current, payment)
        now = timezone.now()
        if Task.objects.filter(pk=task.pk, status=TaskStatus.AWAITING_PAYMENT, selected_bid=bid).update(
            status=TaskStatus.OPEN, selected_bid=None, updated_at=now
        ):
            Bid.objects.filter(pk=bid.pk, status=BidStatus.SELECTED).update(status=BidStatus.PENDING, updated_at=now)
            task_opened(task.pk)
            logger.warning("selection of bid %s on task %s given back: the payment provider failed", bid.id, task.id)
    return None


def _record(task: Task, bid: Bid, provider_name: str, created: ProviderPayment) -> Selection:
    """Step 3: store the provider's payment once and announce the selection, if the claim still holds."""
    with transaction.atomic():
        locked = Task.objects.select_for_update().get(pk=task.pk)
        current = Bid.objects.get(pk=bid.pk)
        if not _is_selected(locked, current):
            # Cancelled, or given back by a failed twin request, while the provider was asked. Its payment
            # was never handed out; a new selection of this bid reuses it under the same key.
            raise _not_selectable(locked, current)
        payment = _selection_payment(locked, current)
        if payment is not None:  # a twin request recorded it first
            return Selection(locked, current, payment)
        if locked.status != TaskStatus.AWAITING_PAYMENT:
            raise _not_selectable(locked, current)
        payment = payment_record(
            source=task_source(locked.id),
            reference=bid_reference(current.id),
            payer_id=locked.poster_id,
            payee_id=current.bidder_id,
            provider=provider_name,
            created=created,
            # The fee the poster saw, pinned (docs/decisions.md#the-fee-is-pinned-at-selection).
            terms=fee_terms(current.currency),
        )
        publish(
            "bid.selected",
            {**bid_data(current, locked), "payment_id": payment.id},
            locked.poster_id,
            current.bidder_id,
        )
    logger.info("bid %s selected on task %s; payment %s", bid.id, task.id, payment.provider_payment_id)
    return Selection(locked, current, payment)
