"""Reads for the assistant and AllModelChat."""

from __future__ import annotations

from django.conf import settings
from django.db.models import QuerySet

from accounts.models import User
from assistant.models import AssistantMessage, CreditBalance, CreditTransaction


def assistant_messages(*, user: User) -> QuerySet[AssistantMessage]:
    """The user's conversation, newest first (keyset-paged on this order)."""
    return AssistantMessage.objects.filter(assistant__user=user).order_by("-created_at", "-id")


def credit_balance(*, user: User) -> int:
    """The user's credits now: 0 before the first one (no balance row yet)."""
    return CreditBalance.objects.filter(user_id=user.pk).values_list("credits", flat=True).first() or 0


def credit_transactions(*, user: User):
    """The user's ledger, newest first."""
    return CreditTransaction.objects.filter(user=user).order_by("-created_at", "-id")


def credit_packs() -> list[dict]:
    return list(settings.CREDIT_PACKS)
