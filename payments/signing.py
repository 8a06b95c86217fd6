"""The `Payments-Signature` header of provider events (docs/decisions.md#payments-webhook-inbound).

    Payments-Signature: t=<unix seconds>,v1=<hex HMAC-SHA256>[,v1=<hex>...]

Each `v1` is the HMAC-SHA256, keyed with a secret's UTF-8 bytes, of `"<t>.<raw body>"`. An event
passes when any `v1` matches any configured secret (several during a rotation) and `t` is within
the tolerance of now. The local provider signs with this module; the webhook verifies with it.
"""

from __future__ import annotations

import hashlib
import hmac
import time
from collections.abc import Iterable

HEADER = "Payments-Signature"
# Stripe signs its events with the same scheme (HMAC-SHA256 of "<t>.<body>", keyed with the endpoint's
# `whsec_...` secret) under its own header name; the webhook accepts either.
STRIPE_HEADER = "Stripe-Signature"
TOLERANCE_SECONDS = 300


def compute(secret: str, timestamp: int, body: bytes) -> str:
    return hmac.new(secret.encode(), f"{timestamp}.".encode() + body, hashlib.sha256).hexdigest()


def signature_header(body: bytes, secrets: Iterable[str], timestamp: int | None = None) -> str:
    """`t=...,v1=...` with one `v1` per secret."""
    t = int(time.time()) if timestamp is None else int(timestamp)
    return ",".join([f"t={t}", *(f"v1={compute(secret, t, body)}" for secret in secrets)])


def parse_header(header: str) -> tuple[int | None, list[str]]:
    """(timestamp, [v1 signatures]); timestamp None when absent or not an integer."""
    timestamp: int | None = None
    signatures: list[str] = []
    for item in header.split(","):
        key, sep, value = item.strip().partition("=")
        if not sep:
            continue
        if key == "t" and timestamp is None:
            try:
                timestamp = int(value)
            except ValueError:
                return None, []
        elif key == "v1" and value:
            signatures.append(value)
    return timestamp, signatures


def verify(
    body: bytes,
    header: str | None,
    secrets: Iterable[str],
    *,
    tolerance: int = TOLERANCE_SECONDS,
    now: float | None = None,
) -> bool:
    """True when the header carries a fresh timestamp and a `v1` made with one of the secrets."""
    if not header:
        return False
    timestamp, signatures = parse_header(header)
    if timestamp is None or not signatures:
        return False
    current = time.time() if now is None else now
    if abs(current - timestamp) > tolerance:
        return False
    matched = False
    for secret in secrets:
        if not secret:
            continue
        expected = compute(secret, timestamp, body).encode()
        for candidate in signatures:
            # Every pair is compared, so the time taken does not depend on where a match is.
            matched |= hmac.compare_digest(expected, candidate.encode("utf-8", "replace"))
    return matched
