from __future__ import annotations

import uuid
from decimal import Decimal

from django.conf import settings
from django.db import models
from django.db.models import Q

from payments.money import places_problem

# Currencies a budget or a bid may be in (ISO 4217, lower case); their minor units are payments.money's
# one table (docs/decisions.md#one-decimal-policy-per-currency).
CURRENCIES = ("usd", "eur", "gbp", "cad", "aud", "nzd", "chf", "sek", "nok", "dkk", "pln", "jpy", "sgd", "inr")


def check_amount_places(amount: Decimal, currency: str) -> str | None:
    """What is wrong with an amount's decimals for its currency, or None."""
    return places_problem(amount, currency) or None


def settlement_currencies() -> tuple[str, ...]:
    """The currencies tasks and bids may be in: those the platform settles in
    (`PAYMENTS_SETTLEMENT_CURRENCIES`, default every one of CURRENCIES;
    docs/decisions.md#settlement-currencies)."""
    chosen = settings.PAYMENTS_SETTLEMENT_CURRENCIES
    if not chosen:
        return CURRENCIES
    wanted = {code.strip().lower() for code in chosen}
    return tuple(code for code in CURRENCIES if code in wanted)


def check_currency(currency: str) -> str | None:
    """Why tasks and bids cannot be in `currency` (the platform does not settle in it), or None."""
    allowed = settlement_currencies()
    if currency in allowed:
        return None
    return f"The platform settles in {', '.join(c.upper() for c in allowed)}; {currency.upper()} is not taken."


def task_source(task_id) -> str:
    """What a task's payments pay for (`payments.Payment.source`, and the source of its earning and ledger
    entries): `task:<uuid>`."""
    return f"task:{task_id}"


def bid_reference(bid_id) -> str:
    """The offer a task's payment was agreed in (`payments.Payment.reference`): `bid:<uuid>`."""
    return f"bid:{bid_id}"


class TaskStatus(models.TextChoices):
    OPEN = "open", "Open"  # taking bids
    AWAITING_PAYMENT = "awaiting_payment", "Awaiting payment"  # a bid was selected; its payment is pending
    DELIVERING = "delivering", "Delivering"  # paid; the winning agent works on it
    IN_REVIEW = "in_review", "In review"  # the agent submitted; the poster reviews
    COMPLETED = "completed", "Completed"  # approved; the payment was released
    DISPUTED = "disputed", "Disputed"
    CANCELLED = "cancelled", "Cancelled"


class TaskCategory(models.TextChoices):
    CONTENT = "content", "Content"
    DESIGN = "design", "Design"
    RESEARCH = "research", "Research"
    DEVELOPMENT = "development", "Development"
    DATA = "data", "Data"
    MARKETING = "marketing", "Marketing"
    OTHER = "other", "Other"


class Task(models.Model):
    id = models.UUIDField(primary_key=True, default=uuid.uuid4, editable=False)
    poster = models.ForeignKey(settings.AUTH_USER_MODEL, on_delete=models.CASCADE, related_name="tasks")
    title = models.CharField(max_length=200)
    description = models.TextField()
    budget_amount = models.DecimalField(max_digits=12, decimal_places=2)
    budget_currency = models.CharField(max_length=3)
    deadline = models.DateTimeField()
    category = models.CharField(max_length=20, choices=TaskCategory.choices, default=TaskCategory.OTHER)
    requirements = models.JSONField(default=list, blank=True)
    status = models.CharField(max_length=20, choices=TaskStatus.choices, default=TaskStatus.OPEN)
    remixed_from = models.ForeignKey("self", null=True, blank=True, on_delete=models.SET_NULL, related_name="remixes")
    # The bid whose payment is pending or made; cleared when that payment fails or the task is cancelled.
    selected_bid = models.ForeignKey("Bid", null=True, blank=True, on_delete=models.SET_NULL, related_name="+")
    created_at = models.DateTimeField(auto_now_add=True)
    updated_at = models.DateTimeField(auto_now=True)
    cancelled_at = models.DateTimeField(null=True, blank=True)
    completed_at = models.DateTimeField(null=True, blank=True)

    class Meta:
        ordering = ["-created_at", "-id"]
        indexes = [
            # Each list's order, to the primary key: keyset pages and their first page read only their rows.
            models.Index(fields=["poster", "-created_at", "-id"]),
            models.Index(fields=["status", "-created_at", "-id"]),
            # A poster's tasks of one status (`scope=mine&status=`): not a walk past the poster's other statuses.
            models.Index(fields=["poster", "status", "-created_at", "-id"], name="task_poster_status_created"),
            # The admin change list (docs/decisions.md#admin-change-lists-at-size).
            models.Index(fields=["-created_at", "-id"], name="task_created_desc"),
            models.Index(fields=["title"], name="task_title_prefix", opclasses=["varchar_pattern_ops"]),
            # The open-task search (docs/decisions.md#task-search): its counts by category and budget, and its
            # orders other than the newest. The text search's index is the migration's own (per engine).
            models.Index(
                fields=["category", "budget_amount"], condition=Q(status="open"), name="task_open_category_budget"
            ),
            models.Index(
                fields=["-budget_amount", "-created_at", "-id"], condition=Q(status="open"), name="task_open_by_budget"
            ),
            models.Index(
                fields=["deadline", "-created_at", "-id"], condition=Q(status="open"), name="task_open_by_deadline"
            ),
        ]

    def __str__(self) -> str:
        return self.title


class BidStatus(models.TextChoices):
    PENDING = "pending", "Pending"
    SELECTED = "selected", "Selected"
    REJECTED = "rejected", "Rejected"  # another bid's payment succeeded, or the task was cancelled
    WITHDRAWN = "withdrawn", "Withdrawn"


# The statuses in which a bid counts as the agent's bid on the task (one per agent and task).
LIVE_BID_STATUSES = (BidStatus.PENDING, BidStatus.SELECTED)


class Bid(models.Model):
    id = models.UUIDField(primary_key=True, default=uuid.uuid4, editable=False)
    task = models.ForeignKey(Task, on_delete=models.CASCADE, related_name="bids")
    agent = models.ForeignKey("tasks_market.Agent", on_delete=models.CASCADE, related_name="bids")
    # The agent's owner, kept here so "my bids" needs no join.
    bidder = models.ForeignKey(settings.AUTH_USER_MODEL, on_delete=models.CASCADE, related_name="bids")
    amount = models.DecimalField(max_digits=12, decimal_places=2)
    currency = models.CharField(max_length=3)
    proposal = models.TextField()
    eta_hours = models.PositiveIntegerField()
    status = models.CharField(max_length=20, choices=BidStatus.choices, default=BidStatus.PENDING)
    created_at = models.DateTimeField(auto_now_add=True)
    updated_at = models.DateTimeField(auto_now=True)

    class Meta:
        ordering = ["-created_at", "-id"]
        indexes = [
            models.Index(fields=["task", "-created_at", "-id"]),
            models.Index(fields=["bidder", "-created_at", "-id"]),
            # The admin change list (docs/decisions.md#admin-change-lists-at-size).
            models.Index(fields=["-created_at", "-id"], name="bid_created_desc"),
        ]
        constraints = [
            models.UniqueConstraint(
                fields=["task", "agent"],
                condition=Q(status__in=["pending", "selected"]),
                name="one_live_bid_per_agent_per_task",
            )
        ]

    def __str__(self) -> str:
        return f"{self.amount} {self.currency.upper()} on {self.task_id} ({self.status})"


class JudgementStatus(models.TextChoices):
    PENDING = "pending", "Pending"
    COMPLETED = "completed", "Completed"


class BidJudgement(models.Model):
    """The judge's evaluation of a bid (tasks_market.services.judging), computed once by a Celery job."""

    bid = models.OneToOneField(Bid, primary_key=True, on_delete=models.CASCADE, related_name="judgement")
    status = models.CharField(max_length=20, choices=JudgementStatus.choices, default=JudgementStatus.PENDING)
    score = models.FloatField(null=True, blank=True)
    criteria = models.JSONField(default=list, blank=True)
    method = models.CharField(max_length=50, blank=True)
    evaluated_at = models.DateTimeField(null=True, blank=True)
    created_at = models.DateTimeField(auto_now_add=True)

    def __str__(self) -> str:
        return f"{self.bid_id} {self.status} {self.score if self.score is not None else ''}".strip()


class Artefact(models.Model):
    """A file or text: a bid's sample, or part of a delivery submission. Exactly one of the two owners."""

    id = models.UUIDField(primary_key=True, default=uuid.uuid4, editable=False)
    bid = models.ForeignKey(Bid, null=True, blank=True, on_delete=models.CASCADE, related_name="sample_artefacts")
    submission = models.ForeignKey(
        "tasks_market.DeliverySubmission", null=True, blank=True, on_delete=models.CASCADE, related_name="artefacts"
    )
    position = models.PositiveSmallIntegerField(default=0)
    name = models.CharField(max_length=255)
    content_type = models.CharField(max_length=100)
    url = models.URLField(max_length=2000, blank=True)
    text = models.TextField(blank=True)
    size = models.PositiveBigIntegerField()
    sha256 = models.CharField(max_length=64)
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        ordering = ["position", "id"]
        constraints = [
            models.CheckConstraint(
                condition=Q(bid__isnull=False, submission__isnull=True) | Q(bid__isnull=True, submission__isnull=False),
                name="artefact_has_one_owner",
            )
        ]

    def __str__(self) -> str:
        return self.name
