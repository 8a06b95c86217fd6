"""schemathesis over every operation of the live schema, through the real TLS server.

Fails on any 5xx and on any response (status, content type, headers, body) that the schema does
not describe. Each later endpoint is covered automatically, because the run reads /openapi.json.
"""

from __future__ import annotations

import subprocess
import sys
import threading
from pathlib import Path

import pytest
from django.core.handlers.wsgi import WSGIHandler

from core.models import RateLimitOverride
from core.tlsserver import DualProtocolRequestHandler, DualProtocolWSGIServer
from tests.conftest import jwt_for
from tests.factories import UserFactory

SCHEMATHESIS = str(Path(sys.executable).with_name("schemathesis"))
CHECKS = ",".join(
    [
        "not_a_server_error",
        "status_code_conformance",
        "content_type_conformance",
        "response_headers_conformance",
        "response_schema_conformance",
    ]
)


@pytest.fixture
def tls_server(tmp_path):
    import ssl

    cert, key = tmp_path / "cert.pem", tmp_path / "key.pem"
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
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    yield f"https://127.0.0.1:{server.server_address[1]}"
    server.shutdown()
    server.server_close()


@pytest.mark.fuzz
@pytest.mark.timeout(1500)
@pytest.mark.django_db(transaction=True)
def test_schemathesis_finds_no_server_errors_or_schema_mismatches(tls_server, tmp_path):
    # The fuzzer is one client sending thousands of requests: lift its caps, as staff would.
    RateLimitOverride.objects.create(network="127.0.0.1", rule="*", limit=10_000_000, reason="fuzzing")
    user = UserFactory(email="fuzzer@example.com", credits=1_000)

    result = subprocess.run(
        [
            SCHEMATHESIS,
            "run",
            f"{tls_server}/openapi.json",
            "--header",
            f"Authorization: Bearer {jwt_for(user)}",
            "--tls-verify",
            "false",
            "--checks",
            CHECKS,
            "--phases",
            "examples,coverage,fuzzing",
            "--max-examples",
            "25",
            "--seed",
            "20261121",
            "--generation-database",
            "none",
            "--workers",
            "1",
            "--suppress-health-check",
            "all",
            "--report-dir",
            str(tmp_path / "report"),
        ],
        capture_output=True,
        text=True,
        timeout=1400,
        check=False,
    )

    print(result.stdout[-3000:])
    assert result.returncode == 0, result.stdout[-20000:] + result.stderr[-5000:]
