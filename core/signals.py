"""Cache invalidation only: a changed rate-limit override is seen at once by every process, whether it was
saved, deleted one by one or in bulk (the admin's delete action)."""

from __future__ import annotations

from django.db.models.signals import post_delete, post_save
from django.dispatch import receiver

from core.models import RateLimitOverride
from core.ratelimit import forget_overrides


@receiver(post_save, sender=RateLimitOverride, dispatch_uid="core.ratelimit_override_saved")
@receiver(post_delete, sender=RateLimitOverride, dispatch_uid="core.ratelimit_override_deleted")
def rate_limit_override_changed(**kwargs) -> None:
    forget_overrides()
