"""Agent reputation from verified outcomes (docs/decisions.md#agent-reputation) and the posters' reviews
(docs/decisions.md#reviews).

`TaskOutcome` is written once, in the transaction that completes a task (approval, the review window's
release) or applies its dispute's resolution; `AgentReputation` is the agent's kept sum of those outcomes and
of the ratings, changed in the same transactions (never recomputed on a read)."""

from __future__ import annotations

import uuid
from decimal import Decimal

from django.conf import settings
from django.db import models
from django.db.models import Q

# The score's prior: an agent with no rating scores PRIOR_MEAN, and PRIOR_WEIGHT units of money weight
# (docs/decisions.md#agent-reputation) must be rated before its own ratings outweigh it.
PRIOR_MEAN = Decimal("3.5")
PRIOR_WEIGHT = Decimal("5")


class OutcomeKind(models.TextChoices):
    APPROVED = "approved", "Approved by the poster (or released by the review window)"
    RELEASE_FULL = "release_full", "Disputed, released in full to the seller"
    SPLIT = "split", "Disputed, split"
    REFUND_FULL = "refund_full", "Disputed, refunded in full to the poster"


# The outcomes in which the agent was paid: a completed task (rated, counted in `completed_tasks`).
COMPLETED_KINDS = (OutcomeKind.APPROVED, OutcomeKind.RELEASE_FULL, OutcomeKind.SPLIT)


class NotCounted(models.TextChoices):
    SELF_DEALT = "self_dealt", "The poster owns the agent"
    REFUNDED_IN_FULL = "refunded_in_full", "Refunded in full after release"


class TaskOutcome(models.Model):
    """How one paid task ended for its agent: one row per task, written when the money moved."""

    task = models.OneToOneField("tasks_market.Task", primary_key=True, on_delete=models.CASCADE, related_name="outcome")
    agent = models.ForeignKey("tasks_market.Agent", on_delete=models.CASCADE, related_name="outcomes")
    kind = models.CharField(max_length=20, choices=OutcomeKind.choices)
    counted = models.BooleanField(default=True)
    not_counted = models.CharField(max_length=20, choices=NotCounted.choices, blank=True)
    revisions = models.PositiveSmallIntegerField(default=0)
    on_time = models.BooleanField(help_text="The last submission came before the task's deadline.")
    delivery_seconds = models.PositiveIntegerField(
        null=True, blank=True, help_text="From the payment's success (the delivery's creation) to the last submission."
    )
    amount = models.DecimalField(max_digits=12, decimal_places=2, help_text="The money at stake (the payment).")
    currency = models.CharField(max_length=3)
    weight = models.DecimalField(max_digits=8, decimal_places=4, help_text="log10(10 + amount), 4 places.")
    recorded_at = models.DateTimeField()

    class Meta:
        indexes = [models.Index(fields=["agent", "counted", "delivery_seconds"], name="outcome_agent_delivery")]

    def __str__(self) -> str:
        return f"{self.task_id} {self.kind}{'' if self.counted else ' (not counted)'}"

    @property
    def completed(self) -> bool:
        return self.kind in COMPLETED_KINDS


class AgentReputation(models.Model):
    """An agent's kept record (docs/decisions.md#agent-reputation): counts of its counted outcomes, and the
    sums of its ratings' score. Changed under its row lock, taken after the task's (the lock order)."""

    agent = models.OneToOneField(
        "tasks_market.Agent", primary_key=True, on_delete=models.CASCADE, related_name="reputation"
    )
    completed_tasks = models.PositiveIntegerField(default=0)
    approved_without_revision = models.PositiveIntegerField(default=0)
    on_time = models.PositiveIntegerField(default=0, help_text="Completed tasks delivered before the deadline.")
    disputes_refund_full = models.PositiveIntegerField(default=0)
    disputes_release_full = models.PositiveIntegerField(default=0)
    disputes_split = models.PositiveIntegerField(default=0)
    rating_count = models.PositiveIntegerField(default=0)
    rating_weight_sum = models.DecimalField(max_digits=16, decimal_places=4, default=Decimal(0))
    rating_weighted_sum = models.DecimalField(max_digits=16, decimal_places=4, default=Decimal(0))
    score = models.DecimalField(max_digits=6, decimal_places=4, default=PRIOR_MEAN)
    updated_at = models.DateTimeField(auto_now=True)

    def __str__(self) -> str:
        return f"{self.agent_id} {self.score} ({self.rating_count})"

    @property
    def disputes(self) -> int:
        return self.disputes_refund_full + self.disputes_release_full + self.disputes_split


class Review(models.Model):
    """The poster's rating of a completed, counted task (one per task; docs/decisions.md#reviews)."""

    id = models.UUIDField(primary_key=True, default=uuid.uuid4, editable=False)
    task = models.OneToOneField("tasks_market.Task", on_delete=models.CASCADE, related_name="review")
    agent = models.ForeignKey("tasks_market.Agent", on_delete=models.CASCADE, related_name="reviews")
    poster = models.ForeignKey(settings.AUTH_USER_MODEL, on_delete=models.CASCADE, related_name="+")
    rating = models.PositiveSmallIntegerField()
    comment = models.TextField(blank=True)
    comment_hidden = models.BooleanField(default=False, help_text="Hidden by staff; the rating still counts.")
    weight = models.DecimalField(max_digits=8, decimal_places=4)
    editable_until = models.DateTimeField()
    reply = models.TextField(blank=True)
    replied_at = models.DateTimeField(null=True, blank=True)
    created_at = models.DateTimeField(auto_now_add=True)
    updated_at = models.DateTimeField(auto_now=True)

    class Meta:
        ordering = ["-created_at", "-id"]
        indexes = [
            models.Index(fields=["agent", "-created_at", "-id"]),
            # The admin change list (docs/decisions.md#admin-change-lists-at-size).
            models.Index(fields=["-created_at", "-id"], name="review_created_desc"),
        ]
        constraints = [models.CheckConstraint(condition=Q(rating__gte=1, rating__lte=5), name="review_rating_1_to_5")]

    def __str__(self) -> str:
        return f"{self.rating}/5 on {self.task_id}"
