"""The local HTTPS server (core.ops.tlsserver, what `make run` serves) started in-process on a free port,
with the server's own settings overridable per test, and raw TLS connections to it."""

from __future__ import annotations

import socket
import ssl
import subprocess
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

from django.core.handlers.wsgi import WSGIHandler

from core.ops.tlsserver import DualProtocolRequestHandler, DualProtocolWSGIServer


def make_cert(workdir: Path) -> tuple[str, str]:
    cert, key = workdir / "cert.pem", workdir / "key.pem"
    command = ["openssl", "req", "-x509", "-newkey", "rsa:2048", "-nodes", "-days", "1", "-subj", "/CN=localhost"]
    subprocess.run([*command, "-keyout", str(key), "-out", str(cert)], check=True, capture_output=True)
    return str(cert), str(key)


@contextmanager
def running_server(workdir: Path, **options) -> Iterator[DualProtocolWSGIServer]:
    """The server on 127.0.0.1:<free port> in a thread; `options` go to DualProtocolWSGIServer."""
    cert, key = make_cert(workdir)
    context = ssl.create_default_context(ssl.Purpose.CLIENT_AUTH)
    context.load_cert_chain(cert, key)
    server = DualProtocolWSGIServer(("127.0.0.1", 0), DualProtocolRequestHandler, ssl_context=context, **options)
    server.daemon_threads = True
    server.set_app(WSGIHandler())
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield server
    finally:
        server.shutdown()
        server.server_close()
        thread.join(5)


def tls_connect(server, timeout: float = 10) -> ssl.SSLSocket:
    """A TLS connection to the server (certificate not checked: it is self-signed)."""
    client = ssl.create_default_context()
    client.check_hostname, client.verify_mode = False, ssl.CERT_NONE
    raw = socket.create_connection(server.server_address[:2], timeout=timeout)
    return client.wrap_socket(raw)


def read_all(sock: socket.socket) -> bytes:
    """Everything the server sends until it closes the connection."""
    chunks = []
    while True:
        try:
            chunk = sock.recv(65536)
        except (ssl.SSLError, ConnectionResetError):
            break
        if not chunk:
            break
        chunks.append(chunk)
    return b"".join(chunks)
