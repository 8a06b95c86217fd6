"""Standard Webhooks signing (CONTRACT §10), shared by outbound webhooks and agent dispatch.

    webhook-id: <msg id, the same on every retry>
    webhook-timestamp: <unix seconds>
    webhook-signature: v1,<base64 HMAC-SHA256 of "id.timestamp.body"> [v1,<...> ...]

One signature per secret, space-separated: during a rotation's grace period both the new and the
old secret sign, so a receiver that still has either one verifies the message.
"""

from __future__ import annotations

import base64
import secrets as random
from datetime import UTC, datetime

from standardwebhooks import Webhook

SECRET_PREFIX = "whsec_"


def new_secret() -> str:
    """`whsec_` + base64 of 32 random bytes, the form the standardwebhooks libraries accept."""
    return SECRET_PREFIX + base64.b64encode(random.token_bytes(32)).decode()


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
