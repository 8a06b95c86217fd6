"""Real HTTP servers on 127.0.0.1: a website to scrape, and a stand-in OpenAI-compatible API."""

from __future__ import annotations

import json
import socket
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

import pytest

from tests.support.servers import serve_http

SITE_HTML = """<!doctype html><html><head>
<title>Northwind Coffee</title>
<meta name="description" content="Small-batch coffee roasted in Leeds.">
<meta name="theme-color" content="#6F4E37">
<link rel="icon" href="/favicon.png">
<style>.btn{background:#6f4e37;color:#FFF}</style>
</head><body>
<img src="/static/northwind-logo.svg" alt="Northwind">
<h1>Fresh roasts, every week</h1><h2>Our beans</h2>
<a href="https://www.instagram.com/northwindcoffee">Instagram</a>
<a href="https://www.linkedin.com/company/northwind-coffee">LinkedIn</a>
</body></html>"""

ROUTES = {
    "/": (200, "text/html; charset=utf-8", SITE_HTML.encode()),
    "/missing": (404, "text/html", b"<html><title>Not found</title></html>"),
    "/logo.png": (200, "image/png", b"\x89PNG\r\n\x1a\nnot really"),
}


class _SiteHandler(BaseHTTPRequestHandler):
    def do_GET(self):
        if self.path == "/moved":
            self.send_response(302)
            self.send_header("Location", "/")
            self.send_header("Content-Length", "0")
            self.end_headers()
            return
        status, content_type, body = ROUTES.get(self.path, (404, "text/plain", b"nothing here"))
        self.send_response(status)
        self.send_header("Content-Type", content_type)
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def log_message(self, *args):
        pass


class _OpenAIHandler(BaseHTTPRequestHandler):
    """Answers each request with the next scripted (status, JSON body) and records what it got."""

    def do_POST(self):
        length = int(self.headers.get("Content-Length") or 0)
        self.server.requests.append(
            {
                "path": self.path,
                "authorization": self.headers.get("Authorization"),
                "body": json.loads(self.rfile.read(length)) if length else None,
            }
        )
        status, body = self.server.replies.pop(0) if len(self.server.replies) > 1 else self.server.replies[0]
        payload = json.dumps(body).encode()
        self.send_response(status)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(payload)))
        self.end_headers()
        self.wfile.write(payload)

    def log_message(self, *args):
        pass


@pytest.fixture
def site() -> Iterator[str]:
    """Base URL of a local website: / (a real page), /moved (302 to /), /missing (404), /logo.png."""
    with serve_http(_SiteHandler) as server:
        yield f"http://127.0.0.1:{server.server_address[1]}"


@pytest.fixture
def fake_openai(settings) -> Iterator[ThreadingHTTPServer]:
    """An OpenAI-compatible API on 127.0.0.1, configured as the server's provider (no retries).

    Set `fake_openai.replies = [(status, body), ...]`; the last reply repeats. `fake_openai.requests`
    records each request.
    """
    with serve_http(_OpenAIHandler) as server:
        server.requests = []
        server.replies = [(500, {"error": {"message": "no reply scripted"}})]
        settings.OPENAI_API_KEY = "sk-test-key"
        settings.OPENAI_BASE_URL = f"http://127.0.0.1:{server.server_address[1]}/v1"
        settings.OPENAI_MAX_RETRIES = 0
        settings.OPENAI_TIMEOUT_SECONDS = 5.0
        yield server


@pytest.fixture
def closed_port_url() -> str:
    """An http URL on 127.0.0.1 where nothing listens."""
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port = sock.getsockname()[1]
    return f"http://127.0.0.1:{port}/"
