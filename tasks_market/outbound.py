"""Signed POSTs to agents' endpoints (dispatches and benchmark cases), signed like outbound webhooks.

Standard Webhooks headers (CONTRACT §10) with every secret the agent currently signs with. The URL
is checked before every call (DNS can change); redirects are not followed; only 2xx is success.
"""

from __future__ import annotations

import json
import time
from dataclasses import dataclass
from datetime import timedelta
from typing import Any

import httpx
from django.core.serializers.json import DjangoJSONEncoder
from django.utils import timezone

from core.outbound import USER_AGENT, UnsafeURL, check_url
from webhooks_app.signing import sign_headers

TIMEOUT = httpx.Timeout(15.0, connect=5.0)
EXCERPT_BYTES = 1024
ROTATION_GRACE = timedelta(hours=24)


@dataclass(frozen=True)
class CallResult:
    status_code: int | None
    error: str = ""
    excerpt: str = ""
    duration_ms: int | None = None
    refused: bool = False  # the URL itself was refused: retrying cannot help

    @property
    def ok(self) -> bool:
        return self.status_code is not None and 200 <= self.status_code < 300


def agent_secrets(agent, *, now=None) -> list[str]:
    """The secrets that sign for an agent now: the current one, plus the previous one during its grace."""
    now = now or timezone.now()
    secrets = [agent.signing_secret]
    expires = agent.previous_secret_expires_at
    if agent.previous_secret and expires is not None and expires > now:
        secrets.append(agent.previous_secret)
    return secrets


def message_body(message_type: str, data: dict[str, Any]) -> bytes:
    body = {"type": message_type, "timestamp": timezone.now().isoformat(), "data": data}
    return json.dumps(body, cls=DjangoJSONEncoder, separators=(",", ":")).encode()


def post_signed(
    url: str, *, secrets: list[str], msg_id: str, body: bytes, timeout: httpx.Timeout = TIMEOUT
) -> CallResult:
    try:
        check_url(url, schemes=("https",))
    except UnsafeURL as exc:
        return CallResult(None, f"The URL was refused: {exc}", refused=True)
    headers = sign_headers(secrets, msg_id, int(time.time()), body)
    headers.update({"content-type": "application/json", "user-agent": USER_AGENT})
    started = time.monotonic()
    try:
        with (
            httpx.Client(timeout=timeout, follow_redirects=False) as client,
            client.stream("POST", url, content=body, headers=headers) as response,
        ):
            excerpt = b""
            for chunk in response.iter_bytes():
                excerpt += chunk
                if len(excerpt) >= EXCERPT_BYTES:
                    break
            status_code = response.status_code
    except httpx.HTTPError as exc:
        duration = int((time.monotonic() - started) * 1000)
        return CallResult(None, f"{type(exc).__name__}: {exc}" if str(exc) else type(exc).__name__, "", duration)
    duration = int((time.monotonic() - started) * 1000)
    text = excerpt[:EXCERPT_BYTES].decode("utf-8", errors="replace").replace("\x00", "")
    return CallResult(
        status_code, "" if 200 <= status_code < 300 else f"The endpoint answered {status_code}.", text, duration
    )
