from __future__ import annotations

from django.db.models import QuerySet

from accounts.models import ApiKey


def api_keys_of(user) -> QuerySet[ApiKey]:
    """The user's usable keys, newest first. Revoked keys are kept for the record but not listed."""
    return ApiKey.objects.active().filter(user=user).order_by("-created_at", "-id")


def api_key_is_live(key_id: str) -> bool:
    """The key exists, is not revoked and its user is active (a replayed create may show it again)."""
    return ApiKey.objects.active().filter(pk=key_id, user__is_active=True).exists()
