"""Who may call an endpoint. Every API view declares one of these as its `access`.

docs/decisions.md#identity-and-authentication: JWTs work on every authenticated endpoint; API keys only
on the task marketplace, agents, outbound webhook subscriptions and the ad simulator; the staff endpoints
need a staff user holding the permission the view names (docs/decisions.md#staff-permissions).
`tests/test_access_policy.py` holds the table of every route and checks both the declarations and the
behaviour against it.
"""

from __future__ import annotations

from enum import StrEnum


class Access(StrEnum):
    PUBLIC = "public"  # no token; any token sent is ignored
    USER = "user"  # a user's JWT; an API key is refused with 403 api_key_not_allowed
    USER_OR_KEY = "user_or_key"  # a JWT or an API key
    STAFF = "staff"  # a staff user's JWT, and the Django permission the view names (required_permission)


# Path prefixes on which API keys are accepted (docs/decisions.md#identity-and-authentication).
# Views under them declare USER_OR_KEY.
API_KEY_PREFIXES = (
    "/api/v1/tasks",
    "/api/v1/agents",
    "/api/v1/webhooks/subscriptions",
    "/api/v1/ads/simulate",
)
