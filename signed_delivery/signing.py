"""Standard Webhooks signing, the one place that signs (see docs/decisions.md#outbound-webhooks-and-agent-dispatch).

    webhook-id: <msg id, the same on every retry>
    webhook-timestamp: <unix seconds>
    webhook-signature: v1,<base64 HMAC-SHA256 of "id.timestamp.body"> [v1,<...> ...]

One signature per secret, space-separated: during a rotation's grace period both the new and the
old secret sign, so a receiver that still has either one verifies the message.
"""

from __future__ import annotations

import base64
import secrets as random
from datetime import UTC, datetime, timedelta

from standardwebhooks import Webhook

SECRET_PREFIX = "whsec_"
# After a rotation the previous secret keeps signing beside the new one for this long.
ROTATION_GRACE = timedelta(hours=24)


def new_secret() -> str:
    """`whsec_` + base64 of 32 random bytes, the form the standardwebhooks libraries accept."""
    return SECRET_PREFIX + base64.b64encode(random.token_bytes(32)).decode()


def signing_secrets(
    *, secret: str, previous_secret: str, previous_expires_at: datetime | None, now: datetime
) -> list[str]:
    """The secrets that sign now: the current one, plus the previous one during its grace period."""
    secrets = [secret]
    if previous_secret and previous_expires_at is not None and previous_expires_at > now:
        secrets.append(previous_secret)
    return secrets


def sign_headers(secrets: list[str], msg_id: str, timestamp: int | datetime, body: bytes | str) -> dict[str, str]:
    if not secrets:
        raise ValueError("at least one secret is needed to sign")
    when = timestamp if isinstance(timestamp, datetime) else datetime.fromtimestamp(int(timestamp), tz=UTC)
    when = when.astimezone(UTC)
    data = body.decode() if isinstance(body, bytes) else body
    signatures = [Webhook(secret).sign(msg_id=msg_id, timestamp=when, data=data) for secret in secrets]
    return {
        "webhook-id": msg_id,
        "webhook-timestamp": str(int(when.timestamp())),
        "webhook-signature": " ".join(signatures),
    }
