"""The shape of an attempt row, shared by every concrete attempt model (an abstract model: no table here)."""

from __future__ import annotations

import uuid

from django.db import models


class AttemptStatus(models.TextChoices):
    PENDING = "pending", "Pending"  # recorded before sending; stays so if the worker died mid-call
    SUCCEEDED = "succeeded", "Succeeded"
    FAILED = "failed", "Failed"


class Attempt(models.Model):
    """One HTTP call of a delivery: recorded before it is made, completed after.

    A concrete subclass adds `delivery = ForeignKey(<its delivery model>, related_name="attempts")`.
    """

    id = models.UUIDField(primary_key=True, default=uuid.uuid4, editable=False)
    number = models.PositiveIntegerField()
    url = models.URLField(max_length=2000)
    status = models.CharField(max_length=20, choices=AttemptStatus.choices, default=AttemptStatus.PENDING)
    status_code = models.PositiveIntegerField(null=True, blank=True)
    duration_ms = models.PositiveIntegerField(null=True, blank=True)
    error = models.TextField(blank=True)
    response_excerpt = models.TextField(blank=True)
    started_at = models.DateTimeField(auto_now_add=True)
    finished_at = models.DateTimeField(null=True, blank=True)

    class Meta:
        abstract = True
        ordering = ["number"]

    def __str__(self) -> str:
        return f"#{self.number} {self.status} {self.status_code or ''}".strip()
