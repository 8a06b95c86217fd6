"""Real HTTP servers on 127.0.0.1 for the scrapers: pages to scrape, and a stand-in Bright Data API."""

from __future__ import annotations

import json
import socket
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

import pytest

from tests.support.servers import serve_http

PAGES = {
    "/acme": (
        200,
        "<html><head><title>Acme Rockets</title><meta name='description' content='Rockets for everyone'>"
        "<meta name='theme-color' content='#ff5500'></head><body><h1>Launch today</h1>"
        "<a href='https://www.instagram.com/acme'>Instagram</a></body></html>",
    ),
    "/globex": (200, "<html><head><title>Globex</title></head><body><h2>Products</h2></body></html>"),
    "/missing": (404, "<html><head><title>Not here</title></head></html>"),
}


class _PageHandler(BaseHTTPRequestHandler):
    def do_GET(self):
        status, body = PAGES.get(self.path, (404, "not found"))
        payload = body.encode()
        self.send_response(status)
        self.send_header("Content-Type", "text/html; charset=utf-8")
        self.send_header("Content-Length", str(len(payload)))
        self.end_headers()
        self.wfile.write(payload)

    def log_message(self, *args):
        pass


class _BrightDataHandler(BaseHTTPRequestHandler):
    """Answers every request with the server's `reply` (status, JSON body) and records the request."""

    def _answer(self):
        length = int(self.headers.get("Content-Length") or 0)
        request = {
            "method": self.command,
            "path": self.path,
            "authorization": self.headers.get("Authorization"),
            "body": json.loads(self.rfile.read(length)) if length else None,
        }
        self.server.requests.append(request)
        reply = self.server.reply
        status, body = reply(request) if callable(reply) else reply
        payload = json.dumps(body).encode()
        self.send_response(status)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(payload)))
        self.end_headers()
        self.wfile.write(payload)

    do_GET = do_POST = _answer

    def log_message(self, *args):
        pass


@pytest.fixture
def pages() -> Iterator[str]:
    """Base URL of a local site with /acme, /globex (200) and /missing (404)."""
    with serve_http(_PageHandler) as server:
        yield f"http://127.0.0.1:{server.server_address[1]}"


@pytest.fixture
def dead_url() -> str:
    """A URL on a loopback port where nothing listens: connecting is refused."""
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port = sock.getsockname()[1]
    return f"http://127.0.0.1:{port}"


@pytest.fixture
def brightdata_server(settings) -> Iterator[ThreadingHTTPServer]:
    """A stand-in for api.brightdata.com: set `.reply = (status, body)`, or a function of the request
    returning one; `.requests` records what came in."""
    with serve_http(_BrightDataHandler) as server:
        server.reply = (200, {})
        server.requests = []
        settings.BRIGHTDATA_BASE_URL = f"http://127.0.0.1:{server.server_address[1]}"
        settings.BRIGHTDATA_API_TOKEN = "bd-test-token"
        yield server
