"""A small multi-threaded WSGI server for `make run` that speaks TLS and plain HTTP on one port.

A browser or client that speaks TLS gets HTTPS. One that sends plain HTTP to the same port is not
dropped with a handshake error: its request reaches Django as plain HTTP and is answered with the
contract's 403 `https_required` (CONTRACT §3). Which protocol a connection speaks is decided by
peeking at its first byte (0x16 opens every TLS handshake) in the connection's own thread.

This is the local server only. Production runs gunicorn behind a TLS-terminating proxy.
"""

from __future__ import annotations

import logging
import socket
import ssl

from django.core.servers.basehttp import ThreadedWSGIServer, WSGIRequestHandler

logger = logging.getLogger(__name__)

TLS_HANDSHAKE = 0x16
FIRST_BYTE_TIMEOUT = 10


class DualProtocolRequestHandler(WSGIRequestHandler):
    def get_environ(self):
        environ = super().get_environ()
        # wsgiref derives `wsgi.url_scheme` from this variable.
        environ["HTTPS"] = "on" if isinstance(self.connection, ssl.SSLSocket) else "off"
        return environ


class DualProtocolWSGIServer(ThreadedWSGIServer):
    def __init__(self, address, handler, *, ssl_context: ssl.SSLContext, **kwargs):
        self.ssl_context = ssl_context
        super().__init__(address, handler, **kwargs)

    def finish_request(self, request, client_address):
        """Runs in the connection's thread: sniff, wrap in TLS if asked, then serve."""
        try:
            request.settimeout(FIRST_BYTE_TIMEOUT)
            first = request.recv(1, socket.MSG_PEEK)
            if first and first[0] == TLS_HANDSHAKE:
                request = self.ssl_context.wrap_socket(request, server_side=True)
            request.settimeout(None)
        except (OSError, ssl.SSLError) as exc:
            logger.info("connection from %s dropped before a request: %s", client_address[0], exc)
            return
        super().finish_request(request, client_address)

    def shutdown_request(self, request):
        try:
            if isinstance(request, ssl.SSLSocket):
                request.unwrap()
        except (OSError, ssl.SSLError):
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
