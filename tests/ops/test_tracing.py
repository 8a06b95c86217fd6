"""Traces and error reports (core/ops/observability.py, docs/operations.md#metrics-and-traces).

- One request's trace crosses the web process, the broker and the worker: on a `make serve` node with
  OTEL_EXPORTER_OTLP_ENDPOINT set, the Django server span of a request that queues a task and the Celery
  task span in the worker carry the same trace id (a local OTLP/HTTP receiver decodes what they export).
- With SENTRY_DSN set, an error raised in a view reaches a local DSN endpoint as an envelope.
- Unset, neither is set up: the libraries are not even imported.
"""

from __future__ import annotations

import gzip
import os
import subprocess
import sys
import threading
import time
import zlib
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

import httpx
import pytest
from opentelemetry.proto.trace.v1.trace_pb2 import Span

from tests.ops.conftest import ROOT, process_env

SERVER, PRODUCER, CONSUMER = Span.SPAN_KIND_SERVER, Span.SPAN_KIND_PRODUCER, Span.SPAN_KIND_CONSUMER


@pytest.mark.e2e
@pytest.mark.timeout(600)
def test_a_request_trace_crosses_the_web_process_the_broker_and_the_worker(observed_node, capsys):
    node = observed_node
    with httpx.Client(base_url=node.server.base_url, verify=False, timeout=30) as client:
        answer = client.post("/api/v1/auth/password/reset", json={"email": "traced@example.com"})
    assert answer.status_code == 202, answer.text

    def crossing() -> tuple[str, list[dict]] | None:
        spans = node.otlp.snapshot()
        for server_span in spans:
            if server_span["kind"] == SERVER and "password/reset" in server_span["name"]:
                same = [s for s in spans if s["trace_id"] == server_span["trace_id"]]
                kinds = {s["kind"] for s in same}
                if {PRODUCER, CONSUMER} <= kinds:
                    return server_span["trace_id"], same
        return None

    deadline = time.monotonic() + 30
    found = crossing()
    while found is None and time.monotonic() < deadline:
        time.sleep(0.3)
        found = crossing()
    assert found is not None, sorted({(s["name"], s["kind"], s["scope"]) for s in node.otlp.snapshot()})
    trace_id, spans = found
    with capsys.disabled():
        print(f"\n[tracing] trace {trace_id}: " + ", ".join(f"{s['name']} ({s['scope']})" for s in spans))
    consumer = [s for s in spans if s["kind"] == CONSUMER]
    assert any("accounts.tasks.password_reset_mail" in s["name"] for s in consumer), consumer
    assert {s["scope"] for s in spans} >= {
        "opentelemetry.instrumentation.django",
        "opentelemetry.instrumentation.celery",
    }


class _Envelopes:
    """A Sentry DSN endpoint on 127.0.0.1: keeps every envelope's decompressed body."""

    def __init__(self):
        self.bodies: list[bytes] = []
        envelopes = self

        class Handler(BaseHTTPRequestHandler):
            def do_POST(self):
                body = self.rfile.read(int(self.headers.get("Content-Length") or 0))
                encoding = self.headers.get("Content-Encoding", "")
                if encoding == "gzip":
                    body = gzip.decompress(body)
                elif encoding == "deflate":
                    body = zlib.decompress(body)
                elif encoding == "br":
                    import brotli

                    body = brotli.decompress(body)
                envelopes.bodies.append(self.path.encode() + b"\n" + body)
                self.send_response(200)
                self.send_header("Content-Length", "0")
                self.end_headers()

            def log_message(self, *args):
                pass

        self.server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        threading.Thread(target=self.server.serve_forever, daemon=True).start()

    @property
    def dsn(self) -> str:
        return f"http://publickey@127.0.0.1:{self.server.server_address[1]}/42"

    def close(self) -> None:
        self.server.shutdown()
        self.server.server_close()


# Run in a process of its own: sentry-sdk patches Django process-wide, which the rest of the suite must not see.
_VIEW_RAISES = """
import sys, types
import django
django.setup()
import sentry_sdk
from django.test import Client, override_settings
from django.urls import path

def boom(request):
    raise RuntimeError("sentry-test-boom")

urls = types.ModuleType("sentry_test_urls")
urls.urlpatterns = [path("boom", boom)]
sys.modules["sentry_test_urls"] = urls
assert sentry_sdk.get_client().is_active(), "SENTRY_DSN set, yet Sentry is off"
with override_settings(ROOT_URLCONF="sentry_test_urls", ALLOWED_HOSTS=["testserver"]):
    status = Client(raise_request_exception=False).get("/boom", secure=True).status_code
sentry_sdk.flush(timeout=10)
print("status", status)
"""


@pytest.mark.django_db
def test_sentry_receives_an_error_raised_in_a_view():
    envelopes = _Envelopes()
    try:
        env = process_env("config.settings.test", SENTRY_DSN=envelopes.dsn)  # on this run's test database
        result = subprocess.run(
            [sys.executable, "-c", _VIEW_RAISES], cwd=ROOT, env=env, capture_output=True, text=True, timeout=120
        )
        assert result.returncode == 0, result.stderr[-3000:]
        assert "status 500" in result.stdout
    finally:
        envelopes.close()
    sent = b"\n".join(envelopes.bodies)
    assert b"/api/42/envelope/" in sent, sent[:500]
    assert b"sentry-test-boom" in sent and b"RuntimeError" in sent, sent.decode(errors="replace")[:1000]


_UNSET = """
import sys
import django
django.setup()
loaded = sorted(m for m in sys.modules if m.startswith(("opentelemetry", "sentry_sdk")))
print("loaded", loaded)
"""


def test_unset_neither_tracing_nor_sentry_is_loaded():
    env = {k: v for k, v in os.environ.items() if not k.startswith(("OTEL_", "SENTRY_"))}
    env["DJANGO_SETTINGS_MODULE"] = "config.settings.test"
    result = subprocess.run(
        [sys.executable, "-c", _UNSET], cwd=ROOT, env=env, capture_output=True, text=True, timeout=120
    )
    assert result.returncode == 0, result.stderr[-3000:]
    assert "loaded []" in result.stdout, result.stdout
