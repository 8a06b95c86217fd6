"""Reads for the assistant and AllModelChat."""

from __future__ import annotations

from django.conf import settings

from accounts.models import User
from assistant.models import AssistantMessage, CreditBalance, CreditTransaction
from core.api.pagination import page


def assistant_messages_page(*, user: User, limit: int, offset: int) -> tuple[list[AssistantMessage], int, bool]:
    """The user's conversation, newest first. Two queries whatever the page size; none of it if no assistant."""
    messages = AssistantMessage.objects.filter(assistant__user=user).order_by("-created_at", "-id")
    return page(messages, limit=limit, offset=offset)


def credit_balance(*, user: User) -> int:
    """The user's credits now: 0 before the first one (no balance row yet)."""
    return CreditBalance.objects.filter(user_id=user.pk).values_list("credits", flat=True).first() or 0


def credit_transactions(*, user: User):
    """The user's ledger, newest first."""
    return CreditTransaction.objects.filter(user=user).order_by("-created_at", "-id")


def credit_packs() -> list[dict]:
    return list(settings.CREDIT_PACKS)
