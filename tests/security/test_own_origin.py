"""Outbound calls may reach this server's own origin in the local profile only (its demo agent and webhook
inbox, docs/guide.md#the-local-demo): exactly that origin, its self-signed certificate trusted for it; other
loopback and private targets stay refused, and production has no such origin."""

from __future__ import annotations

import ssl
import subprocess
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

import pytest

from core.http.outbound import OutboundError, UnsafeURL, check_url, origin_allowed, request
from tests.support.settings_probe import run_probe


@pytest.fixture
def own_origin(settings):
    settings.OUTBOUND_ALLOW_PRIVATE_URLS = False
    settings.OUTBOUND_ALLOWED_ORIGINS = ["https://127.0.0.1:9443"]
    return settings


@pytest.mark.parametrize(
    "url",
    ["https://127.0.0.1:9443/demo/agent/tasks", "https://127.0.0.1:9443/demo/inbox/ada", "HTTPS://127.0.0.1:9443/x"],
)
def test_the_own_origin_is_allowed(own_origin, url):
    assert origin_allowed(url)
    assert check_url(url) == url


@pytest.mark.parametrize(
    "url",
    [
        "https://127.0.0.1:9444/demo/agent/tasks",  # another port
        "http://127.0.0.1:9443/demo/agent/tasks",  # another scheme
        "https://127.0.0.1/demo/agent/tasks",
        "https://10.0.0.1:9443/",
        "https://[::1]:9443/",
        "https://user@127.0.0.1:9443/",
    ],
)
def test_every_other_private_target_is_still_refused(own_origin, url):
    with pytest.raises(UnsafeURL):
        check_url(url)


def make_certificate(directory: Path) -> tuple[Path, Path]:
    """A certificate as scripts/run.sh makes it (self-signed, for localhost and 127.0.0.1)."""
    cert, key = directory / "cert.pem", directory / "key.pem"
    subprocess.run(
        [
            *("openssl", "req", "-x509", "-newkey", "rsa:2048", "-nodes", "-days", "1", "-subj", "/CN=localhost"),
            *("-addext", "subjectAltName=DNS:localhost,IP:127.0.0.1", "-keyout", str(key), "-out", str(cert)),
        ],
        check=True,
        capture_output=True,
    )
    return cert, key


class Ok(BaseHTTPRequestHandler):
    def do_POST(self):
        self.rfile.read(int(self.headers.get("content-length") or 0))
        self.send_response(200)
        self.send_header("content-length", "2")
        self.end_headers()
        self.wfile.write(b"ok")

    def log_message(self, *args):
        pass


@pytest.fixture
def https_server(tmp_path):
    cert, key = make_certificate(tmp_path)
    server = ThreadingHTTPServer(("127.0.0.1", 0), Ok)
    context = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
    context.load_cert_chain(cert, key)
    server.socket = context.wrap_socket(server.socket, server_side=True)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    yield f"https://127.0.0.1:{server.server_address[1]}", cert
    server.shutdown()
    server.server_close()


def test_a_call_to_the_own_origin_verifies_its_certificate_against_the_local_one(settings, https_server):
    origin, cert = https_server
    settings.OUTBOUND_ALLOW_PRIVATE_URLS = False
    settings.OUTBOUND_ALLOWED_ORIGINS = [origin]
    settings.OUTBOUND_ALLOWED_ORIGINS_CA = str(cert)

    assert request("POST", f"{origin}/demo/agent/tasks", content=b"{}", deadline=10).status_code == 200

    settings.OUTBOUND_ALLOWED_ORIGINS_CA = ""  # without the local certificate the TLS check fails, as it should
    with pytest.raises(OutboundError, match="TLS"):
        request("POST", f"{origin}/demo/agent/tasks", content=b"{}", deadline=10)


PROBE = """
import django, json
django.setup()
from django.conf import settings as s
from django.urls import Resolver404, resolve
from core.http.outbound import UnsafeURL, check_url
try:
    check_url(s.PUBLIC_BASE_URL + "/demo/agent/tasks")
    refused = False
except UnsafeURL:
    refused = True
try:
    resolve("/demo/agent/tasks")
    routed = True
except Resolver404:
    routed = False
print(json.dumps({"origins": s.OUTBOUND_ALLOWED_ORIGINS, "agent": s.DEMO_AGENT_ENABLED, "inbox": s.DEMO_INBOX_ENABLED,
                  "refused": refused, "routed": routed, "public": s.PUBLIC_BASE_URL,
                  "webhook": s.PAYMENTS_LOCAL_WEBHOOK_URL}))
"""


def probe(settings_module: str, **environment: str) -> dict:
    return run_probe(PROBE, settings_module, **environment)


def test_production_settings_refuse_loopback_and_route_no_demo():
    seen = probe(
        "config.settings.production",
        DJANGO_SECRET_KEY="production-probe-" + "x" * 40,
        PUBLIC_BASE_URL="https://127.0.0.1:8443",
        DEMO_AGENT_ENABLED="true",  # not read by production: the demo is the local profile's
        DEMO_INBOX_ENABLED="true",
    )

    assert seen["origins"] == [] and seen["agent"] is False and seen["inbox"] is False
    assert seen["refused"] is True and seen["routed"] is False


def test_the_local_profile_allows_its_own_origin_found_from_the_running_server(tmp_path):
    (tmp_path / "origin").write_text("https://127.0.0.1:9555\n")  # what `make run PORT=9555` wrote
    environment = {"VAR_DIR": str(tmp_path), "DATABASE_URL": "", "REDIS_URL": ""}

    seen = probe("config.settings.local", **environment)

    assert seen["origins"] == ["https://127.0.0.1:9555"] and seen["agent"] and seen["inbox"] and seen["routed"]
    assert seen["refused"] is False
    assert seen["webhook"] == "https://127.0.0.1:9555/api/v1/webhooks/payments"  # payments_simulate's target

    assert probe("config.settings.local", PORT="9666", **environment)["webhook"] == (
        "https://127.0.0.1:9666/api/v1/webhooks/payments"
    )
