"""The counts accounts keeps (core.db.counters; docs/decisions.md#lists).

`apikeys.user.<user>` counts each user's usable (not revoked) API keys, for the `total` of their keys list:
a grouped count kept by the triggers of migration 0008, with the condition (`revoked_at IS NULL`) frozen in
their SQL."""

from __future__ import annotations

from accounts.models import ApiKey
from core.db import counters

USER_API_KEYS = "apikeys.user"


def user_api_keys(user_id) -> str:
    return counters.key_name(USER_API_KEYS, user_id)


counters.register_grouped(USER_API_KEYS, lambda: ApiKey.objects.active(), by=("user_id",))
