"""Agent reputation from verified outcomes, and the posters' reviews (docs/decisions.md#agent-reputation,
docs/decisions.md#reviews).

Maintained incrementally: `reputation_record` runs inside the transaction that completes a task or applies
its dispute's resolution, under the task's lock; reviews are written under the task's lock too. The agent's
`AgentReputation` row is locked last (the lock order: the task, its payment and delivery, then the
reputation row), so two tasks of one agent completing at once queue on that row and never deadlock.
Nothing here scans the history on a read; `reputation_recount` does, for a reconciliation only.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from datetime import timedelta
from decimal import ROUND_HALF_UP, Decimal
from typing import Any
from uuid import UUID

from django.db import transaction
from django.db.models import Count, DecimalField, ExpressionWrapper, F, Q, Sum
from django.utils import timezone

from core.http.errors import Forbidden, InvalidState, NotFound
from payments.models import PaymentStatus
from tasks_market.models import (
    Agent,
    AgentReputation,
    Delivery,
    DisputeResolution,
    NotCounted,
    OutcomeKind,
    Review,
    Task,
    TaskOutcome,
    TaskStatus,
)
from tasks_market.models.reputation import COMPLETED_KINDS, PRIOR_MEAN, PRIOR_WEIGHT
from tasks_market.selectors import is_party, selected_payment
from tasks_market.services.announcements import publish
from tasks_market.services.errors import ReplyExists, ReviewExists, ReviewLocked

REVIEW_EDIT_WINDOW = timedelta(days=14)
PLACES = Decimal("0.0001")
# Which AgentReputation counter each dispute outcome adds to.
DISPUTE_FIELD = {
    OutcomeKind.REFUND_FULL: "disputes_refund_full",
    OutcomeKind.RELEASE_FULL: "disputes_release_full",
    OutcomeKind.SPLIT: "disputes_split",
}


RATING_TIMES_WEIGHT = ExpressionWrapper(
    F("weight") * F("rating"), output_field=DecimalField(max_digits=16, decimal_places=4)
)
NOT_REVIEWABLE = "Only the poster of a completed task that counts toward the agent's reputation can review it."


def money_weight(amount: Decimal) -> Decimal:
    """A rating's weight: log10(10 + amount), to 4 places (1 for a free task, 2 at 90, 3 at 990)."""
    return Decimal(str(math.log10(10 + float(amount)))).quantize(PLACES, rounding=ROUND_HALF_UP)


def bayesian_score(weighted_sum: Decimal, weight_sum: Decimal) -> Decimal:
    """(C·m + Σ wᵢ·rᵢ) / (C + Σ wᵢ), to 4 places."""
    return ((PRIOR_WEIGHT * PRIOR_MEAN + weighted_sum) / (PRIOR_WEIGHT + weight_sum)).quantize(
        PLACES, rounding=ROUND_HALF_UP
    )


def _locked_reputation(agent_id) -> AgentReputation:
    """The agent's row, created if missing (INSERT ... ON CONFLICT DO NOTHING: two first outcomes at once
    both find it), then locked."""
    AgentReputation.objects.bulk_create([AgentReputation(agent_id=agent_id)], ignore_conflicts=True)
    return AgentReputation.objects.select_for_update().get(pk=agent_id)


def _apply_outcome(reputation: AgentReputation, outcome: TaskOutcome, sign: int) -> list[str]:
    changed = []
    if outcome.completed:
        reputation.completed_tasks += sign
        changed.append("completed_tasks")
        if outcome.kind == OutcomeKind.APPROVED and outcome.revisions == 0:
            reputation.approved_without_revision += sign
            changed.append("approved_without_revision")
        if outcome.on_time:
            reputation.on_time += sign
            changed.append("on_time")
    if outcome.kind in DISPUTE_FIELD:
        field = DISPUTE_FIELD[outcome.kind]
        setattr(reputation, field, getattr(reputation, field) + sign)
        changed.append(field)
    return changed


def _apply_rating(reputation: AgentReputation, rating: int, weight: Decimal, sign: int) -> list[str]:
    reputation.rating_count += sign
    reputation.rating_weight_sum += sign * weight
    reputation.rating_weighted_sum += sign * weight * rating
    reputation.score = bayesian_score(reputation.rating_weighted_sum, reputation.rating_weight_sum)
    return ["rating_count", "rating_weight_sum", "rating_weighted_sum", "score"]


def _save(reputation: AgentReputation, fields: list[str]) -> None:
    if fields:
        reputation.save(update_fields=[*dict.fromkeys(fields), "updated_at"])


def reputation_record(*, task: Task, delivery: Delivery, amount: Decimal, currency: str, kind: str, now) -> None:
    """Record how a paid task ended for its agent. Called under the task's lock, in the transaction that
    completes the task or applies its resolution; a second call for the task changes nothing. A task whose
    poster owns the agent is recorded but counts for nothing (docs/decisions.md#agent-reputation)."""
    if TaskOutcome.objects.filter(task=task).exists():
        return
    self_dealt = task.poster_id == delivery.agent.owner_id
    started = delivery.created_at
    submitted = delivery.submitted_at
    outcome = TaskOutcome.objects.create(
        task=task,
        agent_id=delivery.agent_id,
        kind=kind,
        counted=not self_dealt,
        not_counted=NotCounted.SELF_DEALT if self_dealt else "",
        revisions=delivery.revision_count,
        on_time=submitted is not None and submitted <= task.deadline,
        delivery_seconds=max(0, int((submitted - started).total_seconds())) if submitted and started else None,
        amount=amount,
        currency=currency,
        weight=money_weight(amount),
        recorded_at=now,
    )
    if outcome.counted:
        reputation = _locked_reputation(outcome.agent_id)
        _save(reputation, _apply_outcome(reputation, outcome, +1))


def reputation_uncount_refunded(*, task_id: UUID) -> bool:
    """A completed task refunded in full after release stops counting: its outcome and its review's rating
    are taken out of the agent's record. True when it changed something; safe to call again."""
    with transaction.atomic():
        Task.objects.select_for_update().filter(pk=task_id).first()  # the lock order: the task first
        outcome = TaskOutcome.objects.select_for_update().filter(task_id=task_id, counted=True).first()
        if outcome is None:
            return False
        outcome.counted, outcome.not_counted = False, NotCounted.REFUNDED_IN_FULL
        outcome.save(update_fields=["counted", "not_counted"])
        reputation = _locked_reputation(outcome.agent_id)
        fields = _apply_outcome(reputation, outcome, -1)
        review = Review.objects.filter(task_id=task_id).first()
        if review is not None:
            fields += _apply_rating(reputation, review.rating, review.weight, -1)
        _save(reputation, fields)
        return True


# Reviews -------------------------------------------------------------------------------------------


def _locked_task(user, task_id: UUID) -> Task:
    """The task under its lock, for a party to it; 404 for anyone else."""
    task = Task.objects.select_for_update().filter(pk=task_id).first()
    if task is None or not is_party(user, task):
        raise NotFound()
    return task


def review_data(review: Review) -> dict[str, Any]:
    return {
        "task_id": review.task_id,
        "review_id": review.id,
        "agent_id": review.agent_id,
        "rating": review.rating,
        "comment": "" if review.comment_hidden else review.comment,
    }


@transaction.atomic
def review_create(*, user, task_id: UUID, rating: int, comment: str = "", now=None) -> Review:
    """The poster rates a completed, counted task once (409 `review_exists` after that)."""
    now = now or timezone.now()
    task = _locked_task(user, task_id)
    if task.poster_id != user.pk:
        raise Forbidden("Only the task's poster can review it.")
    outcome = TaskOutcome.objects.filter(task=task).first()
    if outcome is None or not outcome.counted or outcome.kind not in COMPLETED_KINDS:
        raise InvalidState(NOT_REVIEWABLE)
    if Review.objects.filter(task=task).exists():
        raise ReviewExists()
    review = Review.objects.create(
        task=task,
        agent_id=outcome.agent_id,
        poster=user,
        rating=rating,
        comment=comment,
        weight=outcome.weight,
        editable_until=now + REVIEW_EDIT_WINDOW,
    )
    reputation = _locked_reputation(outcome.agent_id)
    _save(reputation, _apply_rating(reputation, rating, outcome.weight, +1))
    owner_id = Agent.objects.filter(pk=outcome.agent_id).values_list("owner_id", flat=True).first()
    publish("review.created", review_data(review), owner_id, user.pk)
    return review


def _review_of(task: Task) -> Review:
    review = Review.objects.select_for_update().filter(task=task).first()
    if review is None:
        raise NotFound()
    return review


@transaction.atomic
def review_edit(*, user, task_id: UUID, rating: int | None = None, comment: str | None = None, now=None) -> Review:
    """The poster edits the rating or the comment until `editable_until` (then 409 `review_locked`)."""
    now = now or timezone.now()
    task = _locked_task(user, task_id)
    if task.poster_id != user.pk:
        raise Forbidden("Only the task's poster can edit its review.")
    review = _review_of(task)
    if now > review.editable_until:
        raise ReviewLocked()
    fields = []
    if rating is not None and rating != review.rating:
        if TaskOutcome.objects.filter(task=task, counted=True).exists():
            reputation = _locked_reputation(review.agent_id)
            _apply_rating(reputation, review.rating, review.weight, -1)
            _save(reputation, _apply_rating(reputation, rating, review.weight, +1))
        review.rating = rating
        fields.append("rating")
    if comment is not None:
        review.comment = comment
        fields.append("comment")
    if fields:
        review.save(update_fields=[*fields, "updated_at"])
    return review


@transaction.atomic
def review_reply(*, user, task_id: UUID, reply: str, now=None) -> Review:
    """The agent's owner answers a review once (409 `reply_exists` after that)."""
    task = _locked_task(user, task_id)
    review = _review_of(task)
    if not Agent.objects.filter(pk=review.agent_id, owner=user).exists():
        raise Forbidden("Only the owner of the reviewed agent can reply.")
    if review.replied_at is not None:
        raise ReplyExists()
    review.reply, review.replied_at = reply, now or timezone.now()
    review.save(update_fields=["reply", "replied_at", "updated_at"])
    return review


def review_set_hidden(*, review_id: UUID, hidden: bool) -> None:
    """Staff hide (or show again) a review's comment; its rating still counts."""
    Review.objects.filter(pk=review_id).update(comment_hidden=hidden, updated_at=timezone.now())


# Reading -------------------------------------------------------------------------------------------


@dataclass(frozen=True)
class Reputation:
    agent: Agent
    record: AgentReputation
    median_delivery_seconds: int | None
    not_counted: dict[str, int]


def reputation_of(agent_id: UUID) -> Reputation:
    """An agent's record as kept, for anyone signed in. Four indexed reads: the agent with its row, the
    median of its completed tasks' delivery times (a count and the middle row), and how many outcomes do
    not count and why."""
    agent = Agent.objects.select_related("reputation").filter(pk=agent_id).first()
    if agent is None:
        raise NotFound()
    record = getattr(agent, "reputation", None) or AgentReputation(agent=agent)
    timed = TaskOutcome.objects.filter(
        agent=agent, counted=True, kind__in=COMPLETED_KINDS, delivery_seconds__isnull=False
    )
    median = None
    if record.completed_tasks:
        # The lower median (PostgreSQL's percentile_disc(0.5)), on any database: the middle row of the
        # agent's timed outcomes through its (agent, counted, delivery_seconds) index.
        count = timed.count()
        if count:
            middle = timed.order_by("delivery_seconds").values_list("delivery_seconds", flat=True)
            median = middle[(count - 1) // 2]
    not_counted = dict(
        TaskOutcome.objects.filter(agent=agent, counted=False)
        .values_list("not_counted")
        .annotate(n=Count("pk"))
        .values_list("not_counted", "n")
    )
    return Reputation(agent=agent, record=record, median_delivery_seconds=median, not_counted=not_counted)


def reputation_summary(record: AgentReputation | None) -> dict[str, Any]:
    """The short form every bid carries (`agent_reputation`), from the row the bids query joined."""
    record = record or AgentReputation()
    return {
        "score": record.score,
        "rating_count": record.rating_count,
        "completed_tasks": record.completed_tasks,
        "approved_without_revision": record.approved_without_revision,
        "on_time": record.on_time,
        "disputes": record.disputes,
    }


# Reconciliation ------------------------------------------------------------------------------------

COUNTERS = (
    "completed_tasks",
    "approved_without_revision",
    "on_time",
    "disputes_refund_full",
    "disputes_release_full",
    "disputes_split",
    "rating_count",
    "rating_weight_sum",
    "rating_weighted_sum",
    "score",
)


def reputation_recount(agent_id: UUID) -> dict[str, Any]:
    """What the agent's record would be if recomputed from its outcome and review rows (a reconciliation;
    never on a request's path)."""
    counted = TaskOutcome.objects.filter(agent_id=agent_id, counted=True)
    completed = counted.filter(kind__in=COMPLETED_KINDS)
    totals = counted.aggregate(
        completed_tasks=Count("pk", filter=Q(kind__in=COMPLETED_KINDS)),
        approved_without_revision=Count("pk", filter=Q(kind=OutcomeKind.APPROVED, revisions=0)),
        on_time=Count("pk", filter=Q(kind__in=COMPLETED_KINDS, on_time=True)),
        disputes_refund_full=Count("pk", filter=Q(kind=OutcomeKind.REFUND_FULL)),
        disputes_release_full=Count("pk", filter=Q(kind=OutcomeKind.RELEASE_FULL)),
        disputes_split=Count("pk", filter=Q(kind=OutcomeKind.SPLIT)),
    )
    reviews = Review.objects.filter(task_id__in=completed.values("task_id"))
    sums = reviews.aggregate(n=Count("pk"), w=Sum("weight"), rw=Sum(RATING_TIMES_WEIGHT))
    weight, weighted = sums["w"] or Decimal(0), sums["rw"] or Decimal(0)
    return {
        **totals,
        "rating_count": sums["n"],
        "rating_weight_sum": weight,
        "rating_weighted_sum": weighted,
        "score": bayesian_score(weighted, weight),
    }


def reputation_differences() -> dict[UUID, dict[str, tuple[Any, Any]]]:
    """Every agent whose kept record differs from its recount: {agent_id: {field: (kept, recounted)}}."""
    found = {}
    agent_ids = set(TaskOutcome.objects.values_list("agent_id", flat=True).distinct())
    agent_ids |= set(AgentReputation.objects.values_list("agent_id", flat=True))
    kept_rows = AgentReputation.objects.in_bulk(agent_ids)
    for agent_id in agent_ids:
        kept = kept_rows.get(agent_id) or AgentReputation()
        recount = reputation_recount(agent_id)
        wrong = {
            f: (getattr(kept, f), recount[f]) for f in COUNTERS if Decimal(getattr(kept, f)) != Decimal(recount[f])
        }
        if wrong:
            found[agent_id] = wrong
    return found


def reputation_backfill() -> int:
    """Record the outcome of every task that ended before outcomes were kept (completed, or its dispute
    resolved) and has none: each as its transition would have, under the task's lock, then taken out again
    when its payment was refunded in full after release. Safe to run again; answers how many it recorded."""
    ended = Q(status=TaskStatus.COMPLETED) | Q(dispute_resolution__status=DisputeResolution.Status.APPLIED)
    recorded = 0
    for task_id in Task.objects.filter(ended, outcome__isnull=True).values_list("pk", flat=True):
        with transaction.atomic():
            task = Task.objects.select_for_update().get(pk=task_id)
            delivery = Delivery.objects.select_related("agent").filter(task=task).first()
            payment = selected_payment(task)
            if delivery is None or payment is None:
                continue
            resolution = DisputeResolution.objects.filter(task=task).first()
            kind = resolution.outcome if resolution is not None else OutcomeKind.APPROVED
            ended_at = task.completed_at or task.cancelled_at or timezone.now()
            reputation_record(
                task=task, delivery=delivery, amount=payment.amount, currency=payment.currency, kind=kind, now=ended_at
            )
        if kind != OutcomeKind.REFUND_FULL and payment.status == PaymentStatus.REFUNDED:
            reputation_uncount_refunded(task_id=task_id)
        recorded += 1
    return recorded
