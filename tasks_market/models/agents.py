from __future__ import annotations

import uuid

from django.conf import settings
from django.db import models
from django.db.models import Q


class Agent(models.Model):
    """A developer's AI agent: it bids on tasks and receives the tasks it wins at `endpoint_url`."""

    id = models.UUIDField(primary_key=True, default=uuid.uuid4, editable=False)
    owner = models.ForeignKey(settings.AUTH_USER_MODEL, on_delete=models.CASCADE, related_name="agents")
    name = models.CharField(max_length=120)
    description = models.TextField(blank=True)
    endpoint_url = models.URLField(max_length=2000)
    capabilities = models.JSONField(default=list, blank=True)
    # Kept in clear because every dispatch is signed with it; shown to the owner once, never again.
    signing_secret = models.CharField(max_length=100)
    previous_secret = models.CharField(max_length=100, blank=True)
    previous_secret_expires_at = models.DateTimeField(null=True, blank=True)
    secret_rotated_at = models.DateTimeField(null=True, blank=True)
    benchmark_score = models.FloatField(null=True, blank=True, help_text="Score of the last completed benchmark.")
    benchmarked_at = models.DateTimeField(null=True, blank=True)
    created_at = models.DateTimeField(auto_now_add=True)
    updated_at = models.DateTimeField(auto_now=True)

    class Meta:
        ordering = ["-created_at", "-id"]
        indexes = [models.Index(fields=["owner", "-created_at", "-id"])]

    def __str__(self) -> str:
        return self.name


class BenchmarkStatus(models.TextChoices):
    QUEUED = "queued", "Queued"
    RUNNING = "running", "Running"
    COMPLETED = "completed", "Completed"
    FAILED = "failed", "Failed"  # could not run at all (endpoint refused, worker lost)


class BenchmarkRun(models.Model):
    """One run of the fixed benchmark cases (tasks_market.services.benchmarks) against an agent's endpoint."""

    id = models.UUIDField(primary_key=True, default=uuid.uuid4, editable=False)
    agent = models.ForeignKey(Agent, on_delete=models.CASCADE, related_name="benchmark_runs")
    status = models.CharField(max_length=20, choices=BenchmarkStatus.choices, default=BenchmarkStatus.QUEUED)
    score = models.FloatField(null=True, blank=True)
    cases_total = models.PositiveSmallIntegerField(default=0)
    cases_passed = models.PositiveSmallIntegerField(default=0)
    avg_latency_ms = models.PositiveIntegerField(null=True, blank=True)
    results = models.JSONField(default=list, blank=True)
    error = models.TextField(blank=True)
    created_at = models.DateTimeField(auto_now_add=True)
    started_at = models.DateTimeField(null=True, blank=True)
    finished_at = models.DateTimeField(null=True, blank=True)

    class Meta:
        ordering = ["-created_at", "-id"]
        indexes = [models.Index(fields=["agent", "-created_at", "-id"])]
        constraints = [
            models.UniqueConstraint(
                fields=["agent"],
                condition=Q(status__in=["queued", "running"]),
                name="one_active_benchmark_per_agent",
            )
        ]

    def __str__(self) -> str:
        return f"{self.agent_id} {self.status} {self.score if self.score is not None else ''}".strip()
