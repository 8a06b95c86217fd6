from __future__ import annotations

import uuid

from django.conf import settings
from django.db import models

from signed_delivery.attempts import Attempt


class DeliveryStatus(models.TextChoices):
    PENDING = "pending", "Pending"  # to be dispatched to the agent (retries on their schedule)
    DISPATCHED = "dispatched", "Dispatched"  # the agent's endpoint took the task
    SUBMITTED = "submitted", "Submitted"  # the agent's owner submitted the result
    APPROVED = "approved", "Approved"
    DISPUTED = "disputed", "Disputed"
    REVISION_REQUESTED = "revision_requested", "Revision requested"  # to be dispatched again, with feedback
    FAILED = "failed", "Failed"  # dispatch retries exhausted; can be retried by hand
    CANCELLED = "cancelled", "Cancelled"  # the paid task was cancelled and refunded before its work came


# Statuses in which the delivery is waiting to be sent to the agent.
DISPATCHABLE = (DeliveryStatus.PENDING, DeliveryStatus.REVISION_REQUESTED)
MAX_REVISIONS = 3


class Delivery(models.Model):
    """The paid work of one task: dispatched to the winning agent, submitted, reviewed.

    Dispatch bookkeeping: `claimed_at` is set while one worker makes an attempt (a conditional UPDATE
    claims it, so an attempt is never made twice at once); `round` numbers the messages sent (a
    revision, or a retry of a stuck dispatch, starts a new one, with a new `webhook-id`);
    `round_attempts` counts the attempts of the current round against the retry schedule.
    """

    id = models.UUIDField(primary_key=True, default=uuid.uuid4, editable=False)
    task = models.OneToOneField("tasks_market.Task", on_delete=models.CASCADE, related_name="delivery")
    bid = models.ForeignKey("tasks_market.Bid", on_delete=models.CASCADE, related_name="+")
    agent = models.ForeignKey("tasks_market.Agent", on_delete=models.CASCADE, related_name="deliveries")
    status = models.CharField(max_length=20, choices=DeliveryStatus.choices, default=DeliveryStatus.PENDING)
    revision_count = models.PositiveSmallIntegerField(default=0)
    feedback = models.TextField(blank=True, help_text="The poster's feedback with the last revision request.")
    dispute_reason = models.TextField(blank=True)

    round = models.PositiveIntegerField(default=1)
    round_attempts = models.PositiveIntegerField(default=0)
    attempt_count = models.PositiveIntegerField(default=0)
    next_attempt_at = models.DateTimeField(null=True, blank=True)
    claimed_at = models.DateTimeField(null=True, blank=True)
    sweep_retries = models.PositiveSmallIntegerField(default=0, help_text="Stuck dispatches the beat re-sent.")
    last_error = models.TextField(blank=True)

    dispatched_at = models.DateTimeField(null=True, blank=True)
    submitted_at = models.DateTimeField(null=True, blank=True)
    reviewed_at = models.DateTimeField(null=True, blank=True)
    failed_at = models.DateTimeField(null=True, blank=True)
    created_at = models.DateTimeField(auto_now_add=True)
    updated_at = models.DateTimeField(auto_now=True)

    class Meta:
        ordering = ["-created_at"]
        verbose_name_plural = "deliveries"
        indexes = [
            models.Index(fields=["status", "next_attempt_at"]),
            models.Index(fields=["status", "dispatched_at"]),
            models.Index(fields=["claimed_at"]),
            # The admin change list (docs/decisions.md#admin-change-lists-at-size).
            models.Index(fields=["-created_at", "-id"], name="delivery_created_desc"),
        ]

    def __str__(self) -> str:
        return f"{self.task_id} ({self.status})"

    @property
    def message_id(self) -> str:
        """The `webhook-id` of the current round: the same on every retry of it."""
        return f"dlv_{self.id.hex}_{self.round}"


class DeliverySubmission(models.Model):
    """One result the agent's owner submitted; a revision request adds feedback to it."""

    id = models.UUIDField(primary_key=True, default=uuid.uuid4, editable=False)
    delivery = models.ForeignKey(Delivery, on_delete=models.CASCADE, related_name="submissions")
    number = models.PositiveSmallIntegerField()
    notes = models.TextField(blank=True)
    submitted_by = models.ForeignKey(settings.AUTH_USER_MODEL, on_delete=models.CASCADE, related_name="+")
    feedback = models.TextField(blank=True)
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        ordering = ["number"]
        constraints = [models.UniqueConstraint(fields=["delivery", "number"], name="unique_submission_number")]

    def __str__(self) -> str:
        return f"#{self.number} of {self.delivery_id}"


class DeliveryAttempt(Attempt):
    """One HTTP call dispatching a delivery to the agent (see signed_delivery.attempts)."""

    delivery = models.ForeignKey(Delivery, on_delete=models.CASCADE, related_name="attempts")
    round = models.PositiveIntegerField()


class DisputeOutcome(models.TextChoices):
    REFUND_FULL = "refund_full", "Refund the poster in full"
    RELEASE_FULL = "release_full", "Release in full to the seller"
    SPLIT = "split", "Split: refund part, release the rest"


class DisputeResolution(models.Model):
    """Staff's decision on a disputed task (docs/payouts.md#disputes): claimed once under the task's lock
    (`applying`), then the provider calls, then recorded (`applied`). A resubmission finds this row."""

    class Status(models.TextChoices):
        APPLYING = "applying", "Applying"
        APPLIED = "applied", "Applied"

    id = models.UUIDField(primary_key=True, default=uuid.uuid4, editable=False)
    # PROTECT: never deleted, nor with its task (docs/decisions.md#money-rows-are-never-deleted).
    task = models.OneToOneField("tasks_market.Task", on_delete=models.PROTECT, related_name="dispute_resolution")
    outcome = models.CharField(max_length=20, choices=DisputeOutcome.choices)
    refund_amount = models.DecimalField(max_digits=12, decimal_places=2, default=0)
    release_amount = models.DecimalField(max_digits=12, decimal_places=2, default=0)
    currency = models.CharField(max_length=3)
    note = models.TextField(blank=True)
    reason = models.TextField(blank=True, help_text="The poster's reason for the dispute, as it was.")
    resolved_by = models.ForeignKey(
        settings.AUTH_USER_MODEL, null=True, blank=True, on_delete=models.SET_NULL, related_name="+"
    )
    status = models.CharField(max_length=20, choices=Status.choices, default=Status.APPLYING)
    created_at = models.DateTimeField(auto_now_add=True)
    applied_at = models.DateTimeField(null=True, blank=True)

    class Meta:
        ordering = ["-created_at"]

    def __str__(self) -> str:
        return f"{self.task_id} {self.outcome} ({self.status})"
