"""Stand-ins for the network around the outbound client, below our own code: a DNS stub (at
`socket.getaddrinfo`, which both the system resolver and `socket.create_connection` use), a NAT
stand-in that routes a public address to a loopback one (at httpcore's socket backend), and small
HTTP servers on chosen loopback addresses."""

from __future__ import annotations

import socket
import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

import httpcore
import pytest

# A global address. It is never dialled for real: the `internet` fixture routes it to loopback, and
# where it is not routed the connection fails (this test machine has no route out, or times out at
# the test's short deadline).
PUBLIC = "93.184.215.14"


@dataclass
class Dns:
    """Names in `answers` get their successive answers (the last one repeats); other names the system's."""

    answers: dict[str, list[list[str]]] = field(default_factory=dict)
    lookups: list[str] = field(default_factory=list)


@pytest.fixture
def dns(monkeypatch) -> Dns:
    stub, real = Dns(), socket.getaddrinfo

    def getaddrinfo(host, port, family=0, type=0, proto=0, flags=0):
        name = host.decode() if isinstance(host, bytes) else host
        if name not in stub.answers:
            return real(host, port, family, type, proto, flags)
        stub.lookups.append(name)
        sequence = stub.answers[name]
        addresses = sequence.pop(0) if len(sequence) > 1 else sequence[0]
        port = int(port or 0)
        return [
            (socket.AF_INET6, socket.SOCK_STREAM, 6, "", (a, port, 0, 0))
            if ":" in a
            else (socket.AF_INET, socket.SOCK_STREAM, 6, "", (a, port))
            for a in addresses
        ]

    monkeypatch.setattr(socket, "getaddrinfo", getaddrinfo)
    return stub


@pytest.fixture
def internet(monkeypatch) -> dict[str, str]:
    """`internet[public_ip] = loopback_ip`: connections to that public address reach the loopback one
    (same port). Anything else is dialled as given."""
    routes: dict[str, str] = {}
    real = httpcore.SyncBackend.connect_tcp

    def connect_tcp(self, host, port, timeout=None, local_address=None, socket_options=None):
        host = routes.get(host, host)
        return real(self, host, port, timeout=timeout, local_address=local_address, socket_options=socket_options)

    monkeypatch.setattr(httpcore.SyncBackend, "connect_tcp", connect_tcp)
    return routes


@dataclass
class Seen:
    method: str
    path: str
    host: str


class PageHandler(BaseHTTPRequestHandler):
    """Answers every GET/POST with the server's `reply` (status, headers, body) and records it.
    `drip` > 0 sends the body one byte per `drip` seconds (`drip_headers` drips the status line too)."""

    def _answer(self):
        server = self.server
        length = int(self.headers.get("Content-Length") or 0)
        if length:
            self.rfile.read(length)
        server.seen.append(Seen(self.command, self.path, self.headers.get("Host", "")))
        status, headers, body = server.reply(self.path) if callable(server.reply) else server.reply
        head = f"HTTP/1.1 {status} X\r\n" + "".join(f"{k}: {v}\r\n" for k, v in headers.items())
        head += f"Content-Length: {len(body)}\r\nConnection: close\r\n\r\n"
        try:
            if server.drip and server.drip_headers:
                self._drip(head.encode() + body)
            elif server.drip:
                self.wfile.write(head.encode())
                self.wfile.flush()
                self._drip(body)
            else:
                self.wfile.write(head.encode() + body)
        except OSError:  # the client gave up
            pass
        self.close_connection = True

    def _drip(self, data: bytes):
        for i in range(len(data)):
            self.wfile.write(data[i : i + 1])
            self.wfile.flush()
            time.sleep(self.server.drip)

    do_GET = do_POST = _answer

    def log_message(self, *args):
        pass


def html(title: str) -> tuple[int, dict[str, str], bytes]:
    return 200, {"Content-Type": "text/html"}, f"<html><head><title>{title}</title></head><body></body></html>".encode()


@contextmanager
def serve(address: str, port: int = 0, reply=None, drip: float = 0, drip_headers: bool = False):
    """A PageHandler server on `address:port` (port 0: a free one) in a thread."""
    server = ThreadingHTTPServer((address, port), PageHandler)
    server.daemon_threads = True
    server.seen, server.reply, server.drip, server.drip_headers = [], reply or html("Page"), drip, drip_headers
    threading.Thread(target=server.serve_forever, daemon=True).start()
    try:
        yield server
    finally:
        server.shutdown()
        server.server_close()


@contextmanager
def twin_servers(first: str, second: str, first_reply, second_reply) -> Iterator[tuple[ThreadingHTTPServer, ...]]:
    """Two servers on the same port at two loopback addresses (so one URL can reach either)."""
    for _ in range(20):
        with serve(first, reply=first_reply) as one:
            port = one.server_address[1]
            try:
                twin = serve(second, port, reply=second_reply)
                two = twin.__enter__()
            except OSError:
                continue
            try:
                yield one, two
            finally:
                twin.__exit__(None, None, None)
            return
    raise RuntimeError("no port free on both addresses")
