"""This app's logs that grow with traffic, pruned by the hourly job (core.ops.retention)."""

from __future__ import annotations

from datetime import datetime, timedelta

from django.conf import settings

from core.ops.retention import delete_in_batches
from webhooks_app.models import InboundDelivery, WebhookAttempt


def webhook_logs_prune(now: datetime) -> dict[str, int]:
    """Delete log rows older than their retention; returns rows deleted per log.

    - inbound payments webhook deliveries: refused ones (unsigned, badly signed, too large) after
      INBOUND_REFUSED_RETENTION_DAYS, the others after INBOUND_DELIVERY_RETENTION_DAYS. The events
      themselves (InboundEvent, the at-most-once record) are kept.
    - outbound webhook attempts after WEBHOOK_ATTEMPT_RETENTION_DAYS (the delivery keeps its counters).
    """

    def before(days: int) -> datetime:
        return now - timedelta(days=days)

    return {
        "inbound_refused": delete_in_batches(
            InboundDelivery.objects.filter(
                signature_valid=False, received_at__lt=before(settings.INBOUND_REFUSED_RETENTION_DAYS)
            )
        ),
        "inbound_deliveries": delete_in_batches(
            InboundDelivery.objects.filter(received_at__lt=before(settings.INBOUND_DELIVERY_RETENTION_DAYS))
        ),
        "webhook_attempts": delete_in_batches(
            WebhookAttempt.objects.filter(started_at__lt=before(settings.WEBHOOK_ATTEMPT_RETENTION_DAYS))
        ),
    }
