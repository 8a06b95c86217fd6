"""The local HTTPS server (`manage.py serve_tls`, `make run`) lets go of slow and idle connections and
holds a bounded number of threads: a request's headers and its body each have a deadline, an idle
keep-alive connection is closed, and past the thread cap a connection gets a JSON 503 (see
docs/operations.md#the-local-https-server). Against the real server, started in-process on a free port."""

from __future__ import annotations

import json
import socket
import threading
import time

import pytest

from core.ops.tlsserver import DualProtocolRequestHandler
from tests.security.tlsserver_support import read_all, running_server, tls_connect

# The server's threads use the database (rate-limit overrides): committed tables, not the test's transaction.
pytestmark = pytest.mark.django_db(transaction=True)

REQUEST = b"GET /api/v1/nothing-here HTTP/1.1\r\nHost: localhost\r\n\r\n"


def closed_within(sock, seconds: float, drip: bytes | None = None, every: float = 0.2) -> float | None:
    """Seconds until the server closed the connection (None: still open after `seconds`), sending
    `drip` every `every` seconds meanwhile."""
    started = time.monotonic()
    sock.settimeout(every)
    while time.monotonic() - started < seconds:
        try:
            if drip is not None:
                sock.sendall(drip)
            data = sock.recv(65536)
        except TimeoutError:
            continue
        except OSError:  # reset, broken pipe, TLS torn down: closed
            return time.monotonic() - started
        if not data:
            return time.monotonic() - started
    return None


def response_of(sock) -> tuple[int, dict[str, str], bytes]:
    """One HTTP/1.1 response with a Content-Length, read off the socket."""
    buffer = b""
    while b"\r\n\r\n" not in buffer:
        chunk = sock.recv(65536)
        assert chunk, f"closed before a response: {buffer!r}"
        buffer += chunk
    head, body = buffer.split(b"\r\n\r\n", 1)
    lines = head.decode("latin-1").split("\r\n")
    headers = {k.lower(): v.strip() for k, v in (line.split(":", 1) for line in lines[1:])}
    while len(body) < int(headers.get("content-length", 0)):
        body += sock.recv(65536)
    return int(lines[0].split()[1]), headers, body


def test_a_dripping_header_is_cut_at_the_header_timeout(tmp_path):
    with running_server(tmp_path, header_timeout=1.0) as server, tls_connect(server) as tls:
        tls.sendall(b"GET /api/v1/nothing-here HTTP/1.1\r\nHost: localhost\r\n")

        after = closed_within(tls, 8, drip=b"X-Drip: 1\r\n", every=0.3)

    assert after is not None, "a connection dripping header lines is held past the header timeout"
    assert after < 4


def test_a_silent_new_connection_is_closed_at_the_header_timeout(tmp_path):
    with running_server(tmp_path, header_timeout=1.0) as server, tls_connect(server) as tls:
        after = closed_within(tls, 8)

    assert after is not None and after < 4


def test_an_idle_keep_alive_connection_is_closed(tmp_path):
    with running_server(tmp_path, keepalive_timeout=0.5) as server, tls_connect(server) as tls:
        tls.sendall(REQUEST)
        status, headers, _ = response_of(tls)
        assert status == 404
        assert headers.get("connection") != "close"  # kept alive, for a while

        after = closed_within(tls, 8)

    assert after is not None, "an idle keep-alive connection is held forever"
    assert after < 3


def test_a_second_request_on_a_kept_alive_connection_is_served(tmp_path):
    with running_server(tmp_path, keepalive_timeout=2.0) as server, tls_connect(server) as tls:
        tls.sendall(REQUEST)
        assert response_of(tls)[0] == 404
        time.sleep(0.3)
        tls.sendall(REQUEST)
        assert response_of(tls)[0] == 404


def test_a_connection_sends_without_nagles_delay(tmp_path):
    """A response goes out in several small writes (status line, headers, body): with Nagle's algorithm on,
    each kept-alive request waited for the client's delayed ACK, up to 40 ms a request."""
    seen = []

    class Recording(DualProtocolRequestHandler):
        def setup(self):
            super().setup()
            seen.append(self.connection.getsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY))

    with running_server(tmp_path) as server:
        server.RequestHandlerClass = Recording
        with tls_connect(server) as tls:
            tls.sendall(REQUEST)
            assert response_of(tls)[0] == 404
    assert seen and all(seen), seen


def test_a_body_that_stops_arriving_is_cut_at_the_body_timeout(tmp_path):
    head = (
        b"POST /api/v1/auth/token HTTP/1.1\r\nHost: localhost\r\nContent-Type: application/json\r\n"
        b"Content-Length: 100\r\n\r\n{"
    )
    with running_server(tmp_path, body_timeout=1.0) as server, tls_connect(server) as tls:
        tls.sendall(head)
        started = time.monotonic()
        tls.settimeout(8)
        answer = read_all(tls)
        after = time.monotonic() - started

    assert after < 5, "a request whose body stops arriving is held"
    if answer:
        assert b" 500 " not in answer.split(b"\r\n", 1)[0]


def test_past_the_thread_cap_a_connection_gets_a_json_503(tmp_path):
    with running_server(tmp_path, max_threads=2, header_timeout=6.0) as server:
        holders = [tls_connect(server) for _ in range(2)]
        for holder in holders:
            holder.sendall(b"GET /api/v1/nothing-here HTTP/1.1\r\n")  # and then nothing: holds a thread
        time.sleep(0.3)
        try:
            with tls_connect(server) as tls:
                tls.sendall(REQUEST)
                status, headers, body = response_of(tls)
        finally:
            for holder in holders:
                holder.close()
        assert status == 503
        assert headers["content-type"] == "application/json"
        assert int(headers["retry-after"]) >= 1
        assert json.loads(body) == {"detail": "The server is busy. Try again later.", "code": "server_busy"}

        # The held threads are given back when their connections end: a request is served again.
        deadline = time.monotonic() + 5
        while True:
            with tls_connect(server) as tls:
                tls.sendall(REQUEST)
                status = response_of(tls)[0]
            if status == 404 or time.monotonic() > deadline:
                break
            time.sleep(0.2)
        assert status == 404


def test_the_number_of_threads_is_bounded(tmp_path):
    with running_server(tmp_path, max_threads=2, overflow_threads=2, header_timeout=5.0) as server:
        before = threading.active_count()
        sockets = [socket.create_connection(server.server_address[:2], timeout=5) for _ in range(30)]
        try:
            time.sleep(0.5)
            grown = threading.active_count() - before
        finally:
            for sock in sockets:
                sock.close()

    assert grown <= 4, f"{grown} threads for 30 silent connections"


@pytest.mark.parametrize(
    ("name", "value"),
    [
        ("SERVE_TLS_HEADER_TIMEOUT_SECONDS", 10),
        ("SERVE_TLS_BODY_TIMEOUT_SECONDS", 30),
        ("SERVE_TLS_KEEPALIVE_TIMEOUT_SECONDS", 5),
        ("SERVE_TLS_MAX_THREADS", 64),
    ],
)
def test_the_limits_have_sane_defaults(name, value):
    from django.conf import settings

    assert getattr(settings, name) == value
