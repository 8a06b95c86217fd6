"""This app's logs that grow with traffic, pruned by the hourly job (core.ops.retention)."""

from __future__ import annotations

from datetime import datetime, timedelta

from django.conf import settings

from core.ops.retention import delete_in_batches
from tasks_market.models import DeliveryAttempt


def dispatch_logs_prune(now: datetime) -> dict[str, int]:
    """Agent dispatch attempts after DISPATCH_ATTEMPT_RETENTION_DAYS (the delivery keeps its counters)."""
    cutoff = now - timedelta(days=settings.DISPATCH_ATTEMPT_RETENTION_DAYS)
    return {"dispatch_attempts": delete_in_batches(DeliveryAttempt.objects.filter(started_at__lt=cutoff))}
