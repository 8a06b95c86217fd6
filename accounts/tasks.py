from __future__ import annotations

from celery import shared_task
from django.core.management import call_command

from accounts.services import email_change_notice_send, password_reset_mail_send, password_reset_notice_send
from accounts.verification import email_verification_mail_send


@shared_task(name="accounts.tasks.flush_expired_tokens")
def flush_expired_tokens() -> None:
    """Drop expired refresh tokens and their blacklist rows (simplejwt's own command). Idempotent."""
    call_command("flushexpiredtokens")


@shared_task(name="accounts.tasks.password_reset_mail")
def password_reset_mail(email: str) -> None:
    """Mail a reset token if an account has this address; every address is queued alike (no enumeration)."""
    password_reset_mail_send(email=email)


@shared_task(name="accounts.tasks.password_reset_notice_mail")
def password_reset_notice_mail(user_id: str) -> None:
    """Tell the owner a reset completed and list where the account sends data. Once per reset."""
    password_reset_notice_send(user_id=user_id)


@shared_task(name="accounts.tasks.email_change_notice_mail")
def email_change_notice_mail(user_id: str, old_email: str, changed_at: str) -> None:
    """Tell the old address that the account's e-mail changed. Once per change."""
    email_change_notice_send(user_id=user_id, old_email=old_email, changed_at=changed_at)


@shared_task(name="accounts.tasks.email_verification_mail")
def email_verification_mail(user_id: str, email: str, requested_at: str) -> None:
    """Mail a verification token to the account's address, unless it changed or was verified meanwhile. Once."""
    email_verification_mail_send(user_id=user_id, email=email, requested_at=requested_at)
