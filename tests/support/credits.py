"""A user's credits in tests: the balance is assistant's (assistant.models.CreditBalance), not a field of the
user, so tests read and set it here."""

from __future__ import annotations

from django.db.models import F

from accounts.models import User
from assistant.models import CreditBalance
from assistant.selectors import credit_balance


def credits_of(user: User) -> int:
    return credit_balance(user=user)


def credits_set(user: User, amount: int) -> None:
    """Set the balance directly (no ledger row), as a fixture does."""
    CreditBalance.objects.update_or_create(user_id=user.pk, defaults={"credits": amount})


def credits_add(user: User, delta: int) -> None:
    """Add to the balance in one UPDATE (no ledger row): a write whose rollback a test can observe."""
    CreditBalance.objects.get_or_create(user_id=user.pk)
    CreditBalance.objects.filter(user_id=user.pk).update(credits=F("credits") + delta)
