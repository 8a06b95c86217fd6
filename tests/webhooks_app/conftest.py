"""Signed provider events posted to the payments webhook, handlers registered for one test, and a
real HTTP receiver on 127.0.0.1 for outbound webhooks."""

from __future__ import annotations

from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler

import pytest

from payments import registry
from payments.provider_events import SignedEvent
from tests.support.servers import serve_http

WEBHOOK_URL = "/api/v1/webhooks/payments"


def post_event(client, event: SignedEvent, *, body: bytes | None = None, signature: str | None = None):
    """POST a built event as the provider would (optionally with another body or signature header)."""
    extra = {}
    header = event.headers["Payments-Signature"] if signature is None else signature
    if header:
        extra["HTTP_PAYMENTS_SIGNATURE"] = header
    return client.post(WEBHOOK_URL, data=event.body if body is None else body, content_type="application/json", **extra)


@contextmanager
def handling(event_type: str, handler: Callable[[registry.ProviderEvent], None]) -> Iterator[None]:
    registry.register(event_type, handler)
    try:
        yield
    finally:
        registry.unregister(event_type, handler)


@dataclass
class Received:
    path: str
    headers: dict[str, str]
    body: bytes


@dataclass
class Receiver:
    url: str
    requests: list[Received] = field(default_factory=list)
    responses: list[int] = field(default_factory=list)  # answered in order; 200 once they run out

    def next_status(self) -> int:
        return self.responses.pop(0) if self.responses else 200


class _ReceiverHandler(BaseHTTPRequestHandler):
    def do_POST(self):
        receiver: Receiver = self.server.receiver
        length = int(self.headers.get("Content-Length") or 0)
        body = self.rfile.read(length)
        receiver.requests.append(Received(self.path, {k.lower(): v for k, v in self.headers.items()}, body))
        status = receiver.next_status()
        payload = b'{"ok": true}' if status < 300 else b'{"error": "nope"}'
        self.send_response(status)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(payload)))
        self.end_headers()
        self.wfile.write(payload)

    def log_message(self, *args):
        pass


@pytest.fixture
def receiver() -> Iterator[Receiver]:
    with serve_http(_ReceiverHandler) as server:
        server.receiver = Receiver(url=f"http://127.0.0.1:{server.server_address[1]}/hooks")
        yield server.receiver
