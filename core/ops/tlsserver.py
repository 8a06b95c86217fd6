"""A small multi-threaded WSGI server for `make run` that speaks TLS and plain HTTP on one port.

A browser or client that speaks TLS gets HTTPS. One that sends plain HTTP to the same port is not
dropped with a handshake error: its request reaches Django as plain HTTP and is answered with the
403 `https_required` (see docs/decisions.md#https). Which protocol a connection speaks is decided by
peeking at its first byte (0x16 opens every TLS handshake) in the connection's own thread.

No client can hold the server (see docs/operations.md#the-local-https-server):

- a request's line and headers must arrive within SERVE_TLS_HEADER_TIMEOUT_SECONDS of its first byte
  (and a new connection's first byte, TLS handshake included, within that time too), its body within
  SERVE_TLS_BODY_TIMEOUT_SECONDS after them: deadlines for the whole, not per read, so dripping a
  byte now and then does not help;
- a kept-alive connection idle for SERVE_TLS_KEEPALIVE_TIMEOUT_SECONDS is closed;
- at most SERVE_TLS_MAX_THREADS connections are served at once. Past that a few more threads
  (OVERFLOW_THREADS) answer 503 `server_busy` in the API's error shape with `Retry-After`; past those
  too, a connection is closed at once.

This is the local server only. Production runs gunicorn behind a TLS-terminating proxy.
"""

from __future__ import annotations

import io
import json
import logging
import socket
import ssl
import threading
import time

from django.conf import settings
from django.core.servers.basehttp import ServerHandler, ThreadedWSGIServer, WSGIRequestHandler

logger = logging.getLogger(__name__)

TLS_HANDSHAKE = 0x16
OVERFLOW_THREADS = 8  # threads that only answer 503 while every serving thread is busy
REFUSE_TIMEOUT = 2.0  # seconds such a thread gives a connection to send its request head
MAX_HEAD = 65536

BUSY_BODY = json.dumps({"detail": "The server is busy. Try again later.", "code": "server_busy"}).encode()
BUSY_RESPONSE = (
    b"HTTP/1.1 503 Service Unavailable\r\nContent-Type: application/json\r\n"
    + f"Content-Length: {len(BUSY_BODY)}\r\n".encode()
    + b"Retry-After: 1\r\nConnection: close\r\n\r\n"
    + BUSY_BODY
)


class _DeadlineReader(io.RawIOBase):
    """The connection's reads, each given at most the time left before `deadline` (None: no limit).
    Writes get `write_timeout` per operation."""

    def __init__(self, sock: socket.socket, write_timeout: float):
        self.sock, self.write_timeout = sock, write_timeout
        self.deadline: float | None = None
        self.timed_out = False
        sock.settimeout(write_timeout)

    def readable(self) -> bool:
        return True

    def readinto(self, buffer) -> int:
        if self.deadline is not None:
            left = self.deadline - time.monotonic()
            if left <= 0:
                self.timed_out = True
                raise TimeoutError("read deadline passed")
            self.sock.settimeout(left)
        try:
            return self.sock.recv_into(buffer)
        except TimeoutError:
            self.timed_out = True
            raise
        finally:
            self.sock.settimeout(self.write_timeout)


class _ServerHandler(ServerHandler):
    def close(self):
        # Django's drains the unread body first; a body that stopped arriving ends the connection
        # instead of failing the (already answered) request.
        try:
            self.get_stdin().read()
        except OSError:
            self.request_handler.close_connection = True
        super(ServerHandler, self).close()


class DualProtocolRequestHandler(WSGIRequestHandler):
    # wsgiref writes a response's status line, headers and body in separate sends. With Nagle's algorithm
    # the second waits for the client's ACK of the first, which a client delays by up to 40 ms: every
    # keep-alive request would stall that long.
    disable_nagle_algorithm = True

    def setup(self):
        super().setup()
        self.rfile.close()  # the plain buffered socket file; reads go through the deadlines instead
        self._reader = _DeadlineReader(self.connection, self.server.body_timeout)
        self.rfile = io.BufferedReader(self._reader, MAX_HEAD)
        self._served = 0

    def get_environ(self):
        environ = super().get_environ()
        # wsgiref derives `wsgi.url_scheme` from this variable.
        environ["HTTPS"] = "on" if isinstance(self.connection, ssl.SSLSocket) else "off"
        return environ

    def handle_one_request(self):
        """Django's, with a deadline on waiting for the request, on its head, and on its body."""
        server = self.server
        self.close_connection = True
        wait = server.keepalive_timeout if self._served else server.header_timeout
        self._reader.deadline = time.monotonic() + wait
        try:
            if not self.rfile.peek(1):
                return  # the client closed the connection
        except OSError:  # idle past the keep-alive (or first-byte) timeout, or the connection broke
            return
        self._reader.deadline = time.monotonic() + server.header_timeout
        try:
            self.raw_requestline = self.rfile.readline(MAX_HEAD + 1)
            if len(self.raw_requestline) > MAX_HEAD:
                self.requestline = self.request_version = self.command = ""
                self.send_error(414)
                return
            if not self.parse_request():  # an error response has been sent
                return
        except OSError as exc:
            logger.info("connection from %s closed: no complete request head in time (%s)", self.client_address[0], exc)
            return
        self._reader.deadline = time.monotonic() + server.body_timeout
        handler = _ServerHandler(self.rfile, self.wfile, self.get_stderr(), self.get_environ())
        handler.request_handler = self  # backpointer for logging & connection closing
        try:
            handler.run(server.get_app())
        except OSError as exc:  # the body did not arrive in time, or the client went away
            logger.info("connection from %s closed during a request: %s", self.client_address[0], exc)
            self.close_connection = True
        if self._reader.timed_out:
            self.close_connection = True
        self._reader.deadline = None
        self._served += 1


class DualProtocolWSGIServer(ThreadedWSGIServer):
    def __init__(
        self,
        address,
        handler,
        *,
        ssl_context: ssl.SSLContext,
        header_timeout: float | None = None,
        body_timeout: float | None = None,
        keepalive_timeout: float | None = None,
        max_threads: int | None = None,
        overflow_threads: int = OVERFLOW_THREADS,
        **kwargs,
    ):
        self.ssl_context = ssl_context
        self.header_timeout = (
            header_timeout if header_timeout is not None else settings.SERVE_TLS_HEADER_TIMEOUT_SECONDS
        )
        self.body_timeout = body_timeout if body_timeout is not None else settings.SERVE_TLS_BODY_TIMEOUT_SECONDS
        self.keepalive_timeout = (
            keepalive_timeout if keepalive_timeout is not None else settings.SERVE_TLS_KEEPALIVE_TIMEOUT_SECONDS
        )
        self._slots = threading.BoundedSemaphore(max_threads or settings.SERVE_TLS_MAX_THREADS)
        self._overflow = threading.BoundedSemaphore(max(overflow_threads, 1))
        super().__init__(address, handler, **kwargs)

    def process_request(self, request, client_address):
        """A thread of the bounded pool for the connection; when all are busy, a 503 from one of the few
        overflow threads; when those are busy too, the connection is closed."""
        if self._slots.acquire(blocking=False):
            target, release = self.process_request_thread, self._slots.release
        elif self._overflow.acquire(blocking=False):
            target, release = self._refuse, self._overflow.release
        else:
            logger.warning("connection from %s closed: every thread is busy", client_address[0])
            self.shutdown_request(request)
            return

        def run():
            try:
                target(request, client_address)
            finally:
                release()

        threading.Thread(target=run, daemon=True).start()

    def _open(self, request, timeout: float):
        """Sniff the first byte and wrap the connection in TLS if it speaks TLS; None when it does not
        get that far within `timeout` seconds (per step)."""
        try:
            request.settimeout(timeout)
            first = request.recv(1, socket.MSG_PEEK)
            if not first:
                return None
            if first[0] == TLS_HANDSHAKE:
                request = self.ssl_context.wrap_socket(request, server_side=True)
        except (OSError, ssl.SSLError) as exc:
            logger.info("connection dropped before a request: %s", exc)
            return None
        return request

    def finish_request(self, request, client_address):
        """Runs in the connection's thread: sniff, wrap in TLS if asked, then serve."""
        opened = self._open(request, self.header_timeout)
        if opened is None:
            return
        super().finish_request(opened, client_address)

    def _refuse(self, request, client_address):
        """503 `server_busy` for a connection that came while every serving thread was busy."""
        try:
            opened = self._open(request, REFUSE_TIMEOUT)
            if opened is None:
                return
            deadline, head = time.monotonic() + REFUSE_TIMEOUT, b""
            while b"\r\n\r\n" not in head and len(head) < MAX_HEAD:
                left = deadline - time.monotonic()
                if left <= 0:
                    return
                opened.settimeout(left)
                chunk = opened.recv(MAX_HEAD)
                if not chunk:
                    return
                head += chunk
            opened.settimeout(REFUSE_TIMEOUT)
            opened.sendall(BUSY_RESPONSE)
            logger.warning("connection from %s answered 503: every thread is busy", client_address[0])
            self.shutdown_request(opened)
        except (OSError, ssl.SSLError):
            pass
        finally:
            self.shutdown_request(request)

    def shutdown_request(self, request):
        try:
            if isinstance(request, ssl.SSLSocket):
                request.settimeout(1.0)  # the TLS goodbye must not wait on a silent client
                request.unwrap()
        except (OSError, ssl.SSLError, ValueError):
            pass
        super().shutdown_request(request)


def serve(application, host: str, port: int, certfile: str, keyfile: str) -> None:
    context = ssl.create_default_context(ssl.Purpose.CLIENT_AUTH)
    context.load_cert_chain(certfile, keyfile)
    ipv6 = ":" in host
    server = DualProtocolWSGIServer((host, port), DualProtocolRequestHandler, ssl_context=context, ipv6=ipv6)
    server.daemon_threads = True
    server.set_app(application)
    server.serve_forever()
