from __future__ import annotations

from django.db.models import QuerySet

from accounts.models import ApiKey


def api_keys_of(user) -> QuerySet[ApiKey]:
    """The user's usable keys, newest first. Revoked keys are kept for the record but not listed."""
    return ApiKey.objects.active().filter(user=user).order_by("-created_at", "-id")
