"""The Prometheus exporters are private (docs/operations.md#prometheus-metrics): loopback by default, a bearer
token when METRICS_TOKEN is set, and no exporter at all on another address without a token."""

from __future__ import annotations

import logging
import socket

import httpx
import pytest
from prometheus_client import CollectorRegistry, Counter

from core.checks import check_metrics_exporter_private
from core.ops.metrics import bind_is_private, serve

TOKEN = "metrics-test-token-0123456789abcdef"


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


@pytest.fixture
def exporter():
    """Serve a registry with one sample; the server is shut at the end."""
    registry = CollectorRegistry()
    Counter("probe_total", "A sample to scrape.", registry=registry).inc()
    servers = []

    def start(host: str = "127.0.0.1", token: str = "") -> tuple[str, object]:
        port = free_port()
        server = serve(registry, port, host=host, token=token)
        if server is not None:
            servers.append(server)
        return f"http://127.0.0.1:{port}/metrics", server

    yield start
    for server in servers:
        server.shutdown()
        server.server_close()


def test_with_a_token_only_a_scrape_that_sends_it_is_answered(exporter):
    url, _ = exporter(token=TOKEN)

    assert httpx.get(url).status_code == 401
    assert httpx.get(url, headers={"Authorization": "Bearer wrong"}).status_code == 401
    assert httpx.get(url, headers={"Authorization": TOKEN}).status_code == 401  # not as a bearer token
    answered = httpx.get(url, headers={"Authorization": f"Bearer {TOKEN}"})
    assert answered.status_code == 200 and "probe_total 1.0" in answered.text


def test_on_loopback_no_token_is_needed(exporter):
    url, _ = exporter()

    assert "probe_total 1.0" in httpx.get(url).text


def test_another_address_without_a_token_is_refused_and_nothing_listens(exporter, caplog):
    with caplog.at_level(logging.ERROR, logger="core.ops.metrics"):
        url, server = exporter(host="0.0.0.0")

    assert server is None
    assert "METRICS_TOKEN is empty" in caplog.text
    with pytest.raises(httpx.ConnectError):
        httpx.get(url)


def test_another_address_with_a_token_listens_behind_it(exporter):
    url, server = exporter(host="0.0.0.0", token=TOKEN)

    assert server is not None
    assert httpx.get(url).status_code == 401
    assert httpx.get(url, headers={"Authorization": f"Bearer {TOKEN}"}).status_code == 200


@pytest.mark.parametrize(
    ("host", "private"),
    [
        ("127.0.0.1", True),
        ("127.0.0.2", True),
        ("::1", True),
        ("localhost", True),
        ("0.0.0.0", False),
        ("", False),
        ("::", False),
        ("10.0.0.2", False),
        ("metrics.internal", False),
    ],
)
def test_only_loopback_counts_as_private(host, private):
    assert bind_is_private(host) is private


@pytest.mark.parametrize(
    ("host", "token", "refused"),
    [("127.0.0.1", "", False), ("10.0.0.2", "", True), ("0.0.0.0", "", True), ("10.0.0.2", TOKEN, False)],
)
def test_the_deploy_check_wants_a_token_off_loopback(settings, host, token, refused):
    settings.METRICS_HOST, settings.METRICS_TOKEN = host, token

    errors = check_metrics_exporter_private()

    assert [error.id for error in errors] == (["core.E001"] if refused else [])
