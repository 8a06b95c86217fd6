from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime, timedelta

from django.db.models import QuerySet
from django.utils import timezone

from accounts.counters import user_api_keys
from accounts.models import ApiKey
from accounts.review import ReviewItem, review_items_of
from core.db import counters

# How long `GET /auth/me` shows what to review after a password reset: long enough for the owner to log in
# and look, short enough not to nag for ever (docs/decisions.md#identity-and-authentication).
RECOVERY_REVIEW_PERIOD = timedelta(days=7)


def api_keys_of(user) -> QuerySet[ApiKey]:
    """The user's usable keys, newest first. Revoked keys are kept for the record but not listed."""
    return ApiKey.objects.active().filter(user=user).order_by("-created_at", "-id")


def api_keys_total(user) -> int:
    """The count of `api_keys_of(user)`, kept (`apikeys.user.<user>`, docs/decisions.md#lists)."""
    return counters.count_of(user_api_keys(user.pk))


def api_key_is_live(key_id: str) -> bool:
    """The key exists, is not revoked and its user is active (a replayed create may show it again)."""
    return ApiKey.objects.active().filter(pk=key_id, user__is_active=True).exists()


@dataclass(frozen=True)
class RecoveryReview:
    recovered_at: datetime
    shown_until: datetime
    items: list[ReviewItem]


def recovery_review_of(user, *, now: datetime | None = None) -> RecoveryReview | None:
    """After a password reset, for RECOVERY_REVIEW_PERIOD: where the account sends data now, for the owner
    to check for what they did not set up; None otherwise."""
    if user.password_reset_at is None:
        return None
    shown_until = user.password_reset_at + RECOVERY_REVIEW_PERIOD
    if (now or timezone.now()) >= shown_until:
        return None
    return RecoveryReview(recovered_at=user.password_reset_at, shown_until=shown_until, items=review_items_of(user))
