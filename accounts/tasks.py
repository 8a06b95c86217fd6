from __future__ import annotations

from celery import shared_task
from django.core.management import call_command


@shared_task(name="accounts.tasks.flush_expired_tokens")
def flush_expired_tokens() -> None:
    """Drop expired refresh tokens and their blacklist rows (simplejwt's own command). Idempotent."""
    call_command("flushexpiredtokens")
