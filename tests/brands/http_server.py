"""A real HTTP server on 127.0.0.1 for outbound calls in tests (pages to audit, webhook receivers)."""

from __future__ import annotations

import threading
from collections.abc import Iterator
from contextlib import contextmanager
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer


class LocalServer:
    def __init__(self) -> None:
        self.routes: dict[str, tuple[int, str, bytes]] = {}
        self.received: list[tuple[str, str, bytes]] = []  # (method, path, body)
        handler = self._handler()
        self.httpd = ThreadingHTTPServer(("127.0.0.1", 0), handler)
        self.thread = threading.Thread(target=self.httpd.serve_forever, daemon=True)

    @property
    def base_url(self) -> str:
        return f"http://127.0.0.1:{self.httpd.server_address[1]}"

    def route(self, path: str, body: str | bytes, *, status: int = 200, content_type: str = "text/html") -> str:
        self.routes[path] = (status, content_type, body.encode() if isinstance(body, str) else body)
        return self.base_url + path

    def _handler(self):
        server = self

        class Handler(BaseHTTPRequestHandler):
            def _answer(self) -> None:
                length = int(self.headers.get("content-length") or 0)
                server.received.append((self.command, self.path, self.rfile.read(length) if length else b""))
                status, content_type, body = server.routes.get(self.path, (200, "application/json", b"{}"))
                self.send_response(status)
                self.send_header("content-type", content_type)
                self.send_header("content-length", str(len(body)))
                self.end_headers()
                self.wfile.write(body)

            do_GET = do_POST = _answer

            def log_message(self, *args) -> None:
                pass

        return Handler


@contextmanager
def running_server() -> Iterator[LocalServer]:
    """`with running_server() as server:`; test modules wrap it in a fixture."""
    server = LocalServer()
    server.thread.start()
    try:
        yield server
    finally:
        server.httpd.shutdown()
        server.httpd.server_close()
