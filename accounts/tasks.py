from __future__ import annotations

from celery import shared_task
from django.core.management import call_command


@shared_task(name="accounts.tasks.flush_expired_tokens")
def flush_expired_tokens() -> None:
    """Drop expired refresh tokens and their blacklist rows (simplejwt's own command). Idempotent."""
    call_command("flushexpiredtokens")


@shared_task(name="accounts.tasks.password_reset_mail")
def password_reset_mail(email: str) -> None:
    """Mail a reset token if an account has this address; every address is queued alike (no enumeration)."""
    from accounts.services import password_reset_mail_send

    password_reset_mail_send(email=email)
