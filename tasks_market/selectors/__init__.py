"""Reads of the task marketplace. Who sees what:

- a task: everyone while it is open; otherwise its poster and the owner of the agent whose bid
  is selected (the winning agent's owner); anyone else gets 404;
- a task's bids: the poster all of them, a bidder only their own;
- a delivery: the poster and the winning agent's owner;
- agents and their benchmarks: their owner; an agent's reputation and reviews: everyone signed in.
"""

from __future__ import annotations

from uuid import UUID

from django.db.models import Exists, F, OuterRef, Q, QuerySet, Subquery, Value
from django.db.models.functions import Coalesce

from core.db import counters
from payments.models import Payment
from tasks_market.counters import owner_agents, task_bids
from tasks_market.models import (
    Agent,
    Artefact,
    BenchmarkRun,
    Bid,
    BidJudgement,
    Delivery,
    Review,
    SavedSearch,
    Task,
    TaskStatus,
)
from tasks_market.models.market import bid_reference, task_source
from tasks_market.models.reputation import PRIOR_MEAN


def visible_tasks(user) -> QuerySet[Task]:
    selected_is_users = Bid.objects.filter(pk=OuterRef("selected_bid_id"), bidder=user)
    return Task.objects.filter(Q(status=TaskStatus.OPEN) | Q(poster=user) | Exists(selected_is_users))


def is_party(user, task: Task) -> bool:
    """The user is a party to the task: its poster, or the owner of the agent whose bid is selected. A party
    never decides the task's money as staff (docs/decisions.md#staff-permissions)."""
    if user.pk == task.poster_id:
        return True
    return (
        task.selected_bid_id is not None
        and Bid.objects.filter(Q(bidder_id=user.pk) | Q(agent__owner_id=user.pk), pk=task.selected_bid_id).exists()
    )


def tasks_list(user, *, scope: str, status: str | None = None) -> QuerySet[Task]:
    """`mine`: the caller's tasks; `open`: every open task (the caller's included)."""
    queryset = Task.objects.filter(poster=user) if scope == "mine" else Task.objects.filter(status=TaskStatus.OPEN)
    if status:
        queryset = queryset.filter(status=status)
    return queryset.order_by("-created_at", "-id")


def task_for(user, task_id: UUID) -> Task | None:
    return visible_tasks(user).filter(id=task_id).first()


# The bids list's `sort` values and their orders (docs/decisions.md#agent-reputation); None: newest first.
BID_ORDERS = {
    None: ("-created_at", "-id"),
    "amount": ("amount", "id"),
    "eta": ("eta_hours", "id"),
    "reputation": ("-reputation_score", "-reputation_completed", "-created_at", "-id"),
}


def bids_for(user, task: Task, sort: str | None = None) -> QuerySet[Bid]:
    """A task's bids the user may see, each with its agent and the agent's reputation row joined in the same
    query (a bid's `agent_reputation`; no query per bid)."""
    queryset = Bid.objects.filter(task=task).select_related("agent", "agent__reputation", "judgement")
    if task.poster_id != user.pk:
        queryset = queryset.filter(bidder=user)
    if sort == "reputation":  # an agent never rated scores the prior mean
        queryset = queryset.annotate(
            reputation_score=Coalesce(F("agent__reputation__score"), Value(PRIOR_MEAN)),
            reputation_completed=Coalesce(F("agent__reputation__completed_tasks"), Value(0)),
        )
    return queryset.order_by(*BID_ORDERS[sort])


def bids_total(user, task: Task) -> int | None:
    """The total of the task's bids as `bids_for` lists them, when a kept count answers it: its poster sees
    every bid (`tasks.bids.<task>`, docs/decisions.md#lists); a bidder's own bids are counted (None)."""
    return counters.count_of(task_bids(task.pk)) if task.poster_id == user.pk else None


def bid_for(user, task_id: UUID, bid_id: UUID) -> Bid | None:
    """A bid its poster or its bidder may look at."""
    return (
        Bid.objects.select_related("task", "agent")
        .filter(id=bid_id, task_id=task_id)
        .filter(Q(task__poster=user) | Q(bidder=user))
        .first()
    )


def bid_artefacts(bid: Bid) -> QuerySet[Artefact]:
    return Artefact.objects.filter(bid=bid).order_by("position", "id")


def judgement_of(bid: Bid) -> BidJudgement | None:
    return BidJudgement.objects.filter(bid=bid).first()


def delivery_for(user, task_id: UUID) -> Delivery | None:
    """The task's delivery, for its poster or the winning agent's owner, with everything it renders."""
    return (
        Delivery.objects.select_related("task", "agent")
        .prefetch_related("submissions__artefacts")
        .filter(task_id=task_id)
        .filter(Q(task__poster=user) | Q(agent__owner=user))
        .first()
    )


def delivery_by_id(delivery_id: UUID) -> Delivery:
    return (
        Delivery.objects.select_related("task", "agent").prefetch_related("submissions__artefacts").get(pk=delivery_id)
    )


def agents_of(owner) -> QuerySet[Agent]:
    return Agent.objects.filter(owner=owner).order_by("-created_at", "-id")


def agents_total(owner) -> int:
    """The count of `agents_of(owner)`, kept (`agents.owner.<owner>`, docs/decisions.md#lists)."""
    return counters.count_of(owner_agents(owner.pk))


def agent_endpoints_of(owner) -> list[tuple[UUID, str]]:
    """Each agent's (id, endpoint URL): where the owner's won tasks are sent (accounts.review lists them)."""
    return list(agents_of(owner).values_list("id", "endpoint_url"))


def agent_of(owner, agent_id: UUID) -> Agent | None:
    return Agent.objects.filter(owner=owner, id=agent_id).first()


def saved_searches_of(agent: Agent) -> QuerySet[SavedSearch]:
    return SavedSearch.objects.filter(agent=agent).order_by("-created_at", "-id")


def benchmarks_of(agent: Agent) -> QuerySet[BenchmarkRun]:
    return BenchmarkRun.objects.filter(agent=agent).order_by("-created_at", "-id")


def receipt_payment(user, task_id: UUID) -> Payment | None:
    """The task's paid payment (the latest, should there be several), whatever happened to it since
    (released, refunded ...): its poster's receipt; None for anyone else."""
    title = Task.objects.filter(pk=task_id, poster=user).values("title")
    return (
        Payment.objects.filter(source=task_source(task_id), payer=user, succeeded_at__isnull=False)
        .annotate(task_title=Subquery(title[:1]))
        .exclude(task_title=None)
        .order_by("-succeeded_at", "-id")
        .first()
    )


def task_payments(task_id) -> QuerySet[Payment]:
    """A task's payments (payments.Payment, by the source they pay for)."""
    return Payment.objects.filter(source=task_source(task_id))


def selected_payment(task: Task, *, lock: bool = False, **filters) -> Payment | None:
    """The task's payment for its selected bid (the newest, when a failed one came before), or None;
    `lock`: locked (under the task's lock, taken first)."""
    if task.selected_bid_id is None:
        return None
    rows = task_payments(task.pk).filter(reference=bid_reference(task.selected_bid_id), **filters)
    return (rows.select_for_update() if lock else rows).first()


def agent_reviews(agent_id: UUID) -> QuerySet[Review] | None:
    """An agent's reviews, newest first (public to everyone signed in; a hidden comment is not shown); None
    when there is no such agent."""
    if not Agent.objects.filter(pk=agent_id).exists():
        return None
    return Review.objects.filter(agent_id=agent_id).order_by("-created_at", "-id")


def review_for(user, task_id: UUID) -> Review | None:
    """A task's review, for its poster and the reviewed agent's owner."""
    return Review.objects.filter(task_id=task_id).filter(Q(poster=user) | Q(agent__owner=user)).first()
