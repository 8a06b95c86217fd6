"""One signed POST through core.http.outbound: the URL is resolved and checked before every call and the call
goes to the checked address; no redirects; a total deadline; only a 2xx is success."""

from __future__ import annotations

import json
import time
from dataclasses import dataclass
from typing import Any

from django.conf import settings
from django.core.serializers.json import DjangoJSONEncoder
from django.utils import timezone

from core.http.outbound import OutboundError, UnsafeURL, request
from signed_delivery.signing import sign_headers

EXCERPT_BYTES = 1024


@dataclass(frozen=True)
class CallResult:
    status_code: int | None
    error: str = ""  # what failed ("connection refused", "timed out after 15 s"), never the answer's body
    excerpt: str = ""
    duration_ms: int | None = None
    refused: bool = False  # the URL itself was refused: retrying cannot help

    @property
    def ok(self) -> bool:
        return self.status_code is not None and 200 <= self.status_code < 300


def message_body(message_type: str, data: dict[str, Any]) -> bytes:
    """The body every signed message has: `{"type", "timestamp", "data"}`, compact JSON."""
    body = {"type": message_type, "timestamp": timezone.now().isoformat(), "data": data}
    return json.dumps(body, cls=DjangoJSONEncoder, separators=(",", ":")).encode()


def post_signed(url: str, *, secrets: list[str], msg_id: str, body: bytes, deadline: float | None = None) -> CallResult:
    """Sign `body` with every secret (timestamp: the real time of sending) and POST it to `url`, within
    `deadline` seconds in all (OUTBOUND_CALL_DEADLINE_SECONDS unless given)."""
    headers = sign_headers(secrets, msg_id, int(time.time()), body)
    headers["content-type"] = "application/json"
    started = time.monotonic()
    try:
        result = request(
            "POST",
            url,
            content=body,
            headers=headers,
            schemes=("https",),
            max_bytes=EXCERPT_BYTES,
            deadline=deadline if deadline is not None else settings.OUTBOUND_CALL_DEADLINE_SECONDS,
        )
    except UnsafeURL as exc:
        return CallResult(None, f"The URL was refused: {exc}", refused=True)
    except OutboundError as exc:
        return CallResult(None, f"The call failed: {exc}.", "", int((time.monotonic() - started) * 1000))
    text = result.content.decode("utf-8", errors="replace").replace("\x00", "")
    ok = 200 <= result.status_code < 300
    return CallResult(
        result.status_code, "" if ok else f"The endpoint answered {result.status_code}.", text, result.duration_ms
    )
