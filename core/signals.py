"""Cache invalidation: a changed rate-limit override is seen at once by every process, whether it was
saved, deleted one by one or in bulk (the admin's delete action). And every new PostgreSQL connection
parses `timestamptz` in C (core.db.dbtypes)."""

from __future__ import annotations

from django.db.backends.signals import connection_created
from django.db.models.signals import post_delete, post_save
from django.dispatch import receiver

from core.db import dbtypes
from core.http.ratelimit import forget_overrides
from core.models import RateLimitOverride


@receiver(post_save, sender=RateLimitOverride, dispatch_uid="core.ratelimit_override_saved")
@receiver(post_delete, sender=RateLimitOverride, dispatch_uid="core.ratelimit_override_deleted")
def rate_limit_override_changed(**kwargs) -> None:
    forget_overrides()


@receiver(connection_created, dispatch_uid="core.timestamptz_loader")
def connection_opened(connection, **kwargs) -> None:
    dbtypes.install(connection)
