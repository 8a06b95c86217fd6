"""Provider events as the payment provider sends them (docs/decisions.md#payments-webhook-inbound), built
and sent separately.

`build_event()` makes the exact bytes and headers of one signed event, so tests can post it through
the test client and other apps can reuse it; `send_event()` posts it to our own webhook. The shape
follows Stripe's (`{id, object: "event", type, created, data: {object}}`), so a handler written
against the local provider's events also understands Stripe's.
"""

from __future__ import annotations

import ipaddress
import json
import secrets
import string
import time
from dataclasses import dataclass
from typing import Any
from urllib.parse import urlsplit

import httpx
from django.conf import settings

from core.http.errors import ProviderUnavailable
from core.http.outbound import DeadlineTransport
from payments import signing

_ID_ALPHABET = string.ascii_letters + string.digits
SEND_TIMEOUT = httpx.Timeout(15.0, connect=5.0)
SEND_DEADLINE = 20.0  # seconds for the whole delivery (core.http.outbound.DeadlineTransport)


def provider_id(prefix: str) -> str:
    """A Stripe-like id: `pi_`, `sub_`, `evt_`, `in_` ... followed by 24 letters and digits."""
    return f"{prefix}_" + "".join(secrets.choice(_ID_ALPHABET) for _ in range(24))


@dataclass(frozen=True)
class SignedEvent:
    event_id: str
    event_type: str
    body: bytes
    headers: dict[str, str]  # Content-Type and Payments-Signature

    @property
    def payload(self) -> dict[str, Any]:
        return json.loads(self.body)


def signing_secret() -> str:
    configured = [s for s in settings.PAYMENTS_WEBHOOK_SECRET if s]
    if not configured:
        raise ProviderUnavailable("PAYMENTS_WEBHOOK_SECRET is not set, so no event can be signed.")
    return configured[0]


def build_event(
    event_type: str,
    obj: dict[str, Any],
    *,
    event_id: str | None = None,
    created: int | None = None,
    secret: str | None = None,
    signed_at: int | None = None,
    account: str = "",
) -> SignedEvent:
    """One signed event. By default: a fresh `evt_` id, created and signed now, with the first secret.
    `account`: the connected account the event happened on (Stripe Connect's top-level `account`)."""
    now = int(time.time())
    event = {
        "id": event_id or provider_id("evt"),
        "object": "event",
        "type": event_type,
        "created": now if created is None else int(created),
        "livemode": False,
        "data": {"object": obj},
    }
    if account:
        event["account"] = account
    body = json.dumps(event, separators=(",", ":"), sort_keys=True).encode()
    header = signing.signature_header(body, [secret or signing_secret()], now if signed_at is None else signed_at)
    return SignedEvent(
        event_id=event["id"],
        event_type=event_type,
        body=body,
        headers={"Content-Type": "application/json", signing.HEADER: header},
    )


def _is_loopback(url: str) -> bool:
    host = urlsplit(url).hostname or ""
    if host == "localhost":
        return True
    try:
        return ipaddress.ip_address(host).is_loopback
    except ValueError:
        return False


@dataclass(frozen=True)
class SendResult:
    status_code: int
    text: str


def send_event(
    event: SignedEvent, *, url: str | None = None, client: httpx.Client | None = None, deadline: float = SEND_DEADLINE
) -> SendResult:
    """POST the event to our webhook (PAYMENTS_LOCAL_WEBHOOK_URL by default).

    The local server's certificate is self-signed, so verification is skipped for loopback hosts
    only; anything else is verified as usual.
    """
    target = url or settings.PAYMENTS_LOCAL_WEBHOOK_URL
    try:
        if client is not None:
            response = client.post(target, content=event.body, headers=event.headers)
        else:
            transport = DeadlineTransport(deadline, verify=not _is_loopback(target))
            with httpx.Client(timeout=SEND_TIMEOUT, transport=transport) as own:
                response = own.post(target, content=event.body, headers=event.headers)
    except httpx.HTTPError as exc:
        raise ProviderUnavailable(f"Could not deliver the event to {target}: {exc}") from exc
    return SendResult(status_code=response.status_code, text=response.text[:2000])
