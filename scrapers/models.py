"""Scraping snapshots (ours) and the jobs of the local scraping provider (the provider's side)."""

from __future__ import annotations

import uuid

from django.conf import settings
from django.db import models


class SnapshotStatus(models.TextChoices):
    RUNNING = "running", "Running"
    READY = "ready", "Ready"
    FAILED = "failed", "Failed"


FINAL_STATUSES = (SnapshotStatus.READY, SnapshotStatus.FAILED)


def snapshot_status_for(provider_status: str) -> SnapshotStatus:
    """docs/decisions.md#states: the provider's ready → ready; failed/canceled → failed; anything else is still running.

    Providers use several words for "not done yet" (starting, running, collecting, digesting,
    building, scheduled); an unknown word is not a reason to give up on a snapshot, so it counts as running.
    """
    word = (provider_status or "").strip().lower()
    if word == "ready":
        return SnapshotStatus.READY
    if word in {"failed", "canceled", "cancelled"}:
        return SnapshotStatus.FAILED
    return SnapshotStatus.RUNNING


class Snapshot(models.Model):
    """A collection triggered at a scraping provider, tracked until it is ready or failed.

    `next_poll_at` schedules the beat poller (backing off while the snapshot runs) and is null once
    the snapshot is final; `deadline_at` is when the poller gives up and marks it failed.
    """

    id = models.UUIDField(primary_key=True, default=uuid.uuid4, editable=False)
    provider = models.CharField(max_length=20)
    snapshot_id = models.CharField(max_length=100, help_text="The provider's id of the snapshot.")
    dataset_id = models.CharField(max_length=100)
    inputs = models.JSONField(default=list)
    status = models.CharField(max_length=10, choices=SnapshotStatus.choices, default=SnapshotStatus.RUNNING)
    provider_status = models.CharField(max_length=40, blank=True, help_text="The provider's own word, as last seen.")
    records_count = models.PositiveIntegerField(default=0)
    errors_count = models.PositiveIntegerField(default=0)
    error_message = models.TextField(blank=True)
    results = models.JSONField(
        null=True, blank=True, help_text="The records, downloaded from the provider once the snapshot is ready."
    )
    results_fetched_at = models.DateTimeField(null=True, blank=True)
    created_by = models.ForeignKey(
        settings.AUTH_USER_MODEL, null=True, blank=True, on_delete=models.SET_NULL, related_name="snapshots"
    )
    created_at = models.DateTimeField(auto_now_add=True)
    updated_at = models.DateTimeField(auto_now=True)
    last_polled_at = models.DateTimeField(null=True, blank=True)
    next_poll_at = models.DateTimeField(null=True, blank=True)
    poll_attempts = models.PositiveIntegerField(default=0)
    deadline_at = models.DateTimeField()
    completed_at = models.DateTimeField(null=True, blank=True)

    class Meta:
        ordering = ["-created_at"]
        constraints = [
            models.UniqueConstraint(fields=["provider", "snapshot_id"], name="unique_snapshot_per_provider"),
        ]
        indexes = [
            models.Index(fields=["snapshot_id"]),
            models.Index(fields=["status", "next_poll_at"]),
            models.Index(fields=["-created_at"]),
        ]

    def __str__(self) -> str:
        return f"{self.provider}:{self.snapshot_id} ({self.status})"

    @property
    def is_final(self) -> bool:
        return self.status in FINAL_STATUSES


class LocalJobStatus(models.TextChoices):
    STARTING = "starting", "Starting"
    RUNNING = "running", "Running"
    READY = "ready", "Ready"
    FAILED = "failed", "Failed"


class LocalScrapeJob(models.Model):
    """A collection run by the local provider on this machine: the provider's side of a Snapshot.

    `outcomes` holds one entry per processed input, in input order, so a run that stops half way
    (worker lost, time budget spent) resumes at the first unprocessed input. `lease_until` is held
    by the task that is processing the job, so a redelivered task does not process it twice.
    """

    id = models.CharField(primary_key=True, max_length=40)
    dataset_id = models.CharField(max_length=100)
    inputs = models.JSONField(default=list)
    status = models.CharField(max_length=10, choices=LocalJobStatus.choices, default=LocalJobStatus.STARTING)
    outcomes = models.JSONField(default=list)
    records_count = models.PositiveIntegerField(default=0)
    errors_count = models.PositiveIntegerField(default=0)
    error_message = models.TextField(blank=True)
    lease_until = models.DateTimeField(null=True, blank=True)
    created_at = models.DateTimeField(auto_now_add=True)
    started_at = models.DateTimeField(null=True, blank=True)
    finished_at = models.DateTimeField(null=True, blank=True)

    class Meta:
        ordering = ["-created_at"]

    def __str__(self) -> str:
        return f"{self.id} ({self.status})"

    @property
    def records(self) -> list[dict]:
        return [outcome["record"] for outcome in self.outcomes if "record" in outcome]
