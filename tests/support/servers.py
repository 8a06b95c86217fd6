"""Real servers on 127.0.0.1 for tests: plain HTTP stand-ins, our own app over TLS, and the fuzzer."""

from __future__ import annotations

import os
import ssl
import subprocess
import sys
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

from django.core.handlers.wsgi import WSGIHandler

from core.ops.tlsserver import DualProtocolRequestHandler, DualProtocolWSGIServer

SCHEMATHESIS = str(Path(sys.executable).with_name("schemathesis"))
SCHEMATHESIS_CONFIG = str(Path(__file__).with_name("schemathesis.toml"))
SCHEMATHESIS_HOOKS = "tests.support.schemathesis_hooks"
# Fail on any 5xx and on any response (status, content type, headers, body) the schema does not describe.
FUZZ_CHECKS = ",".join(
    [
        "not_a_server_error",
        "status_code_conformance",
        "content_type_conformance",
        "response_headers_conformance",
        "response_schema_conformance",
    ]
)


@contextmanager
def serve_http(handler: type[BaseHTTPRequestHandler]) -> Iterator[ThreadingHTTPServer]:
    """Serve `handler` on a free loopback port in a thread; `server.server_address[1]` is the port."""
    server = ThreadingHTTPServer(("127.0.0.1", 0), handler)
    server.daemon_threads = True
    threading.Thread(target=server.serve_forever, daemon=True).start()
    try:
        yield server
    finally:
        server.shutdown()
        server.server_close()


@contextmanager
def serve_app_over_tls(workdir: Path) -> Iterator[str]:
    """This project's WSGI app behind the local TLS server (as `make run` serves it); yields its base URL."""
    cert, key = workdir / "cert.pem", workdir / "key.pem"
    subprocess.run(
        [
            "openssl",
            "req",
            "-x509",
            "-newkey",
            "rsa:2048",
            "-nodes",
            "-days",
            "1",
            "-subj",
            "/CN=localhost",
            "-keyout",
            str(key),
            "-out",
            str(cert),
        ],
        check=True,
        capture_output=True,
    )
    context = ssl.create_default_context(ssl.Purpose.CLIENT_AUTH)
    context.load_cert_chain(str(cert), str(key))
    server = DualProtocolWSGIServer(("127.0.0.1", 0), DualProtocolRequestHandler, ssl_context=context)
    server.daemon_threads = True
    server.set_app(WSGIHandler())
    threading.Thread(target=server.serve_forever, daemon=True).start()
    try:
        yield f"https://127.0.0.1:{server.server_address[1]}"
    finally:
        server.shutdown()
        server.server_close()


def run_schemathesis(
    base_url: str,
    token: str,
    report_dir: Path,
    *extra: str,
    max_examples: int = 25,
    timeout: int = 2300,
    phases: str = "examples,coverage,fuzzing",
) -> subprocess.CompletedProcess:
    """schemathesis over the live /openapi.json with a bearer token; deterministic (fixed seed, no database)."""
    return subprocess.run(
        [
            SCHEMATHESIS,
            "--config-file",
            SCHEMATHESIS_CONFIG,
            "run",
            f"{base_url}/openapi.json",
            "--header",
            f"Authorization: Bearer {token}",
            "--tls-verify",
            "false",
            "--checks",
            FUZZ_CHECKS,
            "--phases",
            phases,
            "--max-examples",
            str(max_examples),
            "--seed",
            "20261121",
            "--generation-database",
            "none",
            "--workers",
            "1",
            "--suppress-health-check",
            "all",
            "--report-dir",
            str(report_dir),
            *extra,
        ],
        capture_output=True,
        text=True,
        timeout=timeout,
        check=False,
        env={**os.environ, "SCHEMATHESIS_HOOKS": SCHEMATHESIS_HOOKS, "PYTHONPATH": str(Path(__file__).parents[2])},
    )
