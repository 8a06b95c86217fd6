"""schemathesis hooks for every run the suite makes (SCHEMATHESIS_HOOKS, see tests/support/servers.py).

A client sends a fresh Idempotency-Key for each distinct request and the same key only to retry that
request (docs/guide.md#retries). Generated data reuses example values, which would make every later request
with the same key a 422 `idempotency_key_reused`; so a key that is itself valid is replaced by a fresh one,
as a real client's would be. Invalid keys (too long, bad characters) are sent as generated.
"""

from __future__ import annotations

import re
import uuid

import schemathesis

# core.idempotency's PATTERN and MAX_LENGTH (this module runs in schemathesis's process, without Django).
PATTERN = r"^[!-~]([ -~]*[!-~])?$"
MAX_LENGTH = 255
_VALID_KEY = re.compile(PATTERN)


@schemathesis.hook
def before_call(ctx, case, **kwargs):
    headers = case.headers or {}
    for name in list(headers):
        if name.lower() == "idempotency-key" and _valid_key(headers[name]):
            headers[name] = str(uuid.uuid4())
    return None


def _valid_key(value) -> bool:
    return isinstance(value, str) and len(value) <= MAX_LENGTH and bool(_VALID_KEY.match(value))
