"""Pruning of logs that grow with traffic: how long each is kept is a setting (see base.py)."""

from __future__ import annotations

import logging
from datetime import datetime, timedelta

from django.conf import settings
from django.db.models import Model, QuerySet
from django.utils import timezone

logger = logging.getLogger(__name__)

BATCH = 5_000  # rows per DELETE: short transactions, no long lock on a busy table


def _delete_in_batches(queryset: QuerySet) -> int:
    model: type[Model] = queryset.model
    deleted = 0
    while True:
        pks = list(queryset.values_list("pk", flat=True)[:BATCH])
        if not pks:
            return deleted
        deleted += model.objects.filter(pk__in=pks).delete()[0]


def logs_prune(*, now: datetime | None = None) -> dict[str, int]:
    """Delete log rows older than their retention; returns rows deleted per log. Idempotent.

    - inbound payments webhook deliveries: refused ones (unsigned, badly signed, too large) after
      INBOUND_REFUSED_RETENTION_DAYS, the others after INBOUND_DELIVERY_RETENTION_DAYS. The events
      themselves (InboundEvent, the at-most-once record) are kept.
    - outbound webhook attempts after WEBHOOK_ATTEMPT_RETENTION_DAYS (the delivery keeps its counters).
    - agent dispatch attempts after DISPATCH_ATTEMPT_RETENTION_DAYS (likewise).
    """
    from tasks_market.models import DeliveryAttempt
    from webhooks_app.models import InboundDelivery, WebhookAttempt

    now = now or timezone.now()

    def before(days: int) -> datetime:
        return now - timedelta(days=days)

    counts = {
        "inbound_refused": _delete_in_batches(
            InboundDelivery.objects.filter(
                signature_valid=False, received_at__lt=before(settings.INBOUND_REFUSED_RETENTION_DAYS)
            )
        ),
        "inbound_deliveries": _delete_in_batches(
            InboundDelivery.objects.filter(received_at__lt=before(settings.INBOUND_DELIVERY_RETENTION_DAYS))
        ),
        "webhook_attempts": _delete_in_batches(
            WebhookAttempt.objects.filter(started_at__lt=before(settings.WEBHOOK_ATTEMPT_RETENTION_DAYS))
        ),
        "dispatch_attempts": _delete_in_batches(
            DeliveryAttempt.objects.filter(started_at__lt=before(settings.DISPATCH_ATTEMPT_RETENTION_DAYS))
        ),
    }
    if any(counts.values()):
        logger.info("pruned old log rows: %s", counts)
    return counts
