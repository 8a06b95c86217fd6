"""An agent's saved searches of the open tasks, and the announcements of the tasks they match
(docs/decisions.md#saved-searches)."""

from __future__ import annotations

import uuid

from django.db import models

from signed_delivery.attempts import Attempt

# At most this many saved searches per agent (a 409 past it).
MAX_SEARCHES_PER_AGENT = 20


class SavedSearch(models.Model):
    """The task list's search parameters (tasks_market.filters, but `sort`) as an agent's standing query:
    every new or reopened open task they select is announced to the agent once (SearchMatch)."""

    id = models.UUIDField(primary_key=True, default=uuid.uuid4, editable=False)
    agent = models.ForeignKey("tasks_market.Agent", on_delete=models.CASCADE, related_name="saved_searches")
    # Any of these categories; empty: every category.
    categories = models.JSONField(default=list, blank=True)
    currency = models.CharField(max_length=3, blank=True)
    min_budget = models.DecimalField(max_digits=12, decimal_places=2, null=True, blank=True)
    max_budget = models.DecimalField(max_digits=12, decimal_places=2, null=True, blank=True)
    deadline_after = models.DateTimeField(null=True, blank=True)
    deadline_before = models.DateTimeField(null=True, blank=True)
    q = models.CharField(max_length=200, blank=True)
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        ordering = ["-created_at", "-id"]
        indexes = [models.Index(fields=["agent", "-created_at", "-id"])]

    def __str__(self) -> str:
        return f"search {self.pk} of agent {self.agent_id}"


class MatchStatus(models.TextChoices):
    PENDING = "pending", "Pending"  # to be announced (retries on their schedule)
    SENT = "sent", "Sent"  # the agent's endpoint took it
    FAILED = "failed", "Failed"  # retries exhausted, or the endpoint is gone (410)
    SKIPPED = "skipped", "Skipped"  # the task closed before its announcement went out


class SearchMatch(models.Model):
    """A task announced to an agent because one of its saved searches selects it: one per task and agent,
    whichever search and however many nodes found it (the unique constraint), sent on the signed-delivery
    engine."""

    id = models.UUIDField(primary_key=True, default=uuid.uuid4, editable=False)
    task = models.ForeignKey("tasks_market.Task", on_delete=models.CASCADE, related_name="+")
    agent = models.ForeignKey("tasks_market.Agent", on_delete=models.CASCADE, related_name="search_matches")
    # The search that matched first (kept if the search is deleted before the announcement goes out).
    search_id = models.UUIDField()
    status = models.CharField(max_length=20, choices=MatchStatus.choices, default=MatchStatus.PENDING)
    attempt_count = models.PositiveIntegerField(default=0)
    next_attempt_at = models.DateTimeField(null=True, blank=True)
    claimed_at = models.DateTimeField(null=True, blank=True)
    last_error = models.TextField(blank=True)
    created_at = models.DateTimeField(auto_now_add=True)
    sent_at = models.DateTimeField(null=True, blank=True)

    class Meta:
        ordering = ["-created_at", "-id"]
        constraints = [models.UniqueConstraint(fields=["task", "agent"], name="one_match_per_task_and_agent")]
        indexes = [
            models.Index(fields=["agent", "-created_at", "-id"]),
            # The sweep's due announcements.
            models.Index(fields=["next_attempt_at"], condition=models.Q(status="pending"), name="match_due"),
        ]

    def __str__(self) -> str:
        return f"task {self.task_id} for agent {self.agent_id}: {self.status}"

    @property
    def message_id(self) -> str:
        return f"match_{self.pk}"


class SearchMatchAttempt(Attempt):
    delivery = models.ForeignKey(SearchMatch, on_delete=models.CASCADE, related_name="attempts")
