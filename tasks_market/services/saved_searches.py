"""Saved searches that push (docs/decisions.md#saved-searches): an agent's owner saves the task list's search
parameters for the agent, and every task that becomes open (posted, remixed, or open again after a failed
payment or a withdrawn selection) and that a saved search selects is announced to the agent's endpoint once:
`{"type": "task.matched", "timestamp", "data": {"search_id", "task"}}`, `task` as the list shows it, signed
like a dispatch, on the signed-delivery engine (one SearchMatch per task and agent, whichever node finds it).

Schedule after the first attempt: 10 s, 1 min, 5 min (±10 % jitter); then the announcement has failed.
410 Gone and a refused URL fail it at once. A task that closed before its announcement went out is skipped.
"""

from __future__ import annotations

import logging
from datetime import datetime
from decimal import Decimal
from uuid import UUID

from django.db import transaction
from django.db.models import Q
from django.utils import timezone

from core.http.errors import Conflict, NotFound
from core.ops.enqueue import enqueue_after_commit
from signed_delivery.engine import (
    Channel,
    Message,
    RetrySchedule,
    claims_release_stale,
    deliveries_attempt_together,
    deliveries_enqueue,
    deliveries_overdue,
    deliveries_retry_later,
    delivery_attempt,
    delivery_settle,
)
from signed_delivery.sending import CallResult, message_body
from tasks_market.models import (
    Agent,
    MatchStatus,
    SavedSearch,
    SearchMatch,
    SearchMatchAttempt,
    Task,
    TaskStatus,
)
from tasks_market.models.searches import MAX_SEARCHES_PER_AGENT
from tasks_market.representation import task_item
from tasks_market.selectors.task_list import TASK_COLUMNS
from tasks_market.selectors.task_search import searched
from tasks_market.services.agents import agent_secrets

logger = logging.getLogger(__name__)

# The Celery jobs (tasks_market.tasks), queued by name.
MATCH_TASK = "tasks_market.tasks.match_saved_searches"
ANNOUNCE_TASK = "tasks_market.tasks.announce_match"
SCHEDULE = RetrySchedule((10, 60, 5 * 60))
TASK_CLOSED = "The task is no longer open."


@transaction.atomic
def saved_search_create(
    *,
    owner,
    agent_id: UUID,
    category: list[str] | None = None,
    currency: str = "",
    min_budget: Decimal | None = None,
    max_budget: Decimal | None = None,
    deadline_after: datetime | None = None,
    deadline_before: datetime | None = None,
    q: str = "",
) -> SavedSearch:
    # The agent's row, locked: two saves at once count each other against the limit.
    agent = Agent.objects.select_for_update().filter(pk=agent_id, owner=owner).first()
    if agent is None:
        raise NotFound()
    if SavedSearch.objects.filter(agent=agent).count() >= MAX_SEARCHES_PER_AGENT:
        raise Conflict(f"An agent keeps at most {MAX_SEARCHES_PER_AGENT} saved searches; delete one first.")
    return SavedSearch.objects.create(
        agent=agent,
        categories=sorted(set(category or [])),
        currency=currency or "",
        min_budget=min_budget,
        max_budget=max_budget,
        deadline_after=deadline_after,
        deadline_before=deadline_before,
        q=(q or "").strip(),
    )


def saved_search_delete(*, owner, agent_id: UUID, search_id: UUID) -> None:
    deleted, _ = SavedSearch.objects.filter(pk=search_id, agent_id=agent_id, agent__owner=owner).delete()
    if not deleted:
        raise NotFound()


def task_opened(task_id: UUID) -> None:
    """A task became open: its saved-search matches are found once the transaction commits. If the broker is
    down then, the task is not announced (it is still in the list)."""
    enqueue_after_commit(MATCH_TASK, str(task_id))


def search_matches_find(*, task_id: UUID | str) -> int:
    """Announce the open task `task_id` to every agent with a saved search that selects it (the poster's own
    agents aside), once per agent: its first matching search names it. Returns the announcements queued (those
    not yet attempted). Safe to run twice, on two nodes at once: the unique (task, agent) decides."""
    task = Task.objects.filter(pk=task_id, status=TaskStatus.OPEN).first()
    if task is None:
        return 0
    candidates = (
        SavedSearch.objects.exclude(agent__owner_id=task.poster_id)
        .filter(Q(currency="") | Q(currency=task.budget_currency))
        .filter(Q(min_budget__isnull=True) | Q(min_budget__lte=task.budget_amount))
        .filter(Q(max_budget__isnull=True) | Q(max_budget__gte=task.budget_amount))
        .filter(Q(deadline_after__isnull=True) | Q(deadline_after__lte=task.deadline))
        .filter(Q(deadline_before__isnull=True) | Q(deadline_before__gte=task.deadline))
        .order_by("created_at", "id")
        .only("id", "agent_id", "categories", "q")
    )
    chosen: dict[UUID, UUID] = {}
    for search in candidates.iterator():
        if search.agent_id in chosen or (search.categories and task.category not in search.categories):
            continue
        if search.q and not searched(Task.objects.filter(pk=task.pk), {"q": search.q}).exists():
            continue
        chosen[search.agent_id] = search.pk
    if not chosen:
        return 0
    now = timezone.now()
    SearchMatch.objects.bulk_create(
        [
            SearchMatch(task=task, agent_id=agent, search_id=search, next_attempt_at=now)
            for agent, search in chosen.items()
        ],
        ignore_conflicts=True,  # another node, or a run before this one, made it: announced once
    )
    due = list(
        SearchMatch.objects.filter(task=task, status=MatchStatus.PENDING, attempt_count=0).values_list("pk", flat=True)
    )
    # The first attempts are made here, together (one claim, one message per agent from one read of the task,
    # the calls side by side), not queued as a job per agent: matching and announcing one task is one job.
    # A retry is queued with its countdown; one that cannot be queued is found by the sweep.
    deliveries_retry_later(CHANNEL, deliveries_attempt_together(CHANNEL, due))
    return len(due)


class MatchChannel(Channel):
    delivery_model = SearchMatch
    attempt_model = SearchMatchAttempt
    schedule = SCHEDULE
    task_name = ANNOUNCE_TASK
    waiting = Q(status=MatchStatus.PENDING)

    def load(self, match_id: UUID | str, claim: datetime) -> SearchMatch | None:
        return next(iter(self.load_together([match_id], claim)), None)

    def load_together(self, match_ids: list, claim: datetime) -> list[SearchMatch]:
        matches = list(SearchMatch.objects.select_related("agent").filter(pk__in=match_ids, claimed_at=claim))
        task_ids = {match.task_id for match in matches}
        still_open = set(Task.objects.filter(pk__in=task_ids, status=TaskStatus.OPEN).values_list("pk", flat=True))
        for match in matches:
            if match.task_id not in still_open:
                delivery_settle(match, claim=claim, status=MatchStatus.SKIPPED, last_error=TASK_CLOSED)
        return [match for match in matches if match.task_id in still_open]

    def message(self, match: SearchMatch, now: datetime) -> Message:
        return self.messages([match], now)[0]

    def messages(self, matches: list[SearchMatch], now: datetime) -> list[Message]:
        rows = Task.objects.filter(pk__in={match.task_id for match in matches}).values(*TASK_COLUMNS)
        items = {row["id"]: task_item(row, None) for row in rows}
        return [
            Message(
                url=match.agent.endpoint_url,
                msg_id=match.message_id,
                body=message_body("task.matched", {"search_id": match.search_id, "task": items[match.task_id]}),
                secrets=agent_secrets(match.agent, now=now),
            )
            for match in matches
        ]

    def is_permanent(self, result: CallResult) -> bool:
        return result.refused or super().is_permanent(result)

    def settle(self, match: SearchMatch, claim: datetime, result: CallResult, retry_at: datetime | None) -> None:
        if result.ok:
            changes = {"status": MatchStatus.SENT, "sent_at": timezone.now(), "last_error": ""}
        elif retry_at is None:
            changes = {"status": MatchStatus.FAILED, "last_error": result.error[:2000]}
        else:
            changes = {"next_attempt_at": retry_at, "last_error": result.error[:2000]}
        delivery_settle(match, claim=claim, **changes)


CHANNEL = MatchChannel()


def search_match_attempt(*, match_id: UUID | str, now: datetime | None = None) -> float | None:
    """The next attempt of an announcement if it is due. Returns seconds until the retry, if one is due."""
    return delivery_attempt(CHANNEL, delivery_id=match_id, now=now)


def search_matches_sweep(*, now: datetime | None = None) -> int:
    """Recover announcements a lost message or a dead worker left behind; returns how many were queued."""
    now = now or timezone.now()
    due = dict.fromkeys([*claims_release_stale(CHANNEL, now=now), *deliveries_overdue(CHANNEL, now=now)])
    deliveries_enqueue(CHANNEL, due)
    return len(due)
