from __future__ import annotations

import pytest

pytestmark = pytest.mark.django_db


@pytest.mark.parametrize("path", ["/health", "/api/v1/auth/token", "/api/v1/nothing-here", "/openapi.json"])
def test_plain_http_is_refused_before_anything_runs(api, path):
    response = api.get(path, secure=False)

    assert response.status_code == 403
    assert response.json() == {"detail": "HTTPS is required.", "code": "https_required"}
    assert "X-RateLimit-Limit" not in response  # refused before the rate limiter counted it


def test_https_responses_carry_hsts(api):
    response = api.get("/health")

    assert response.status_code == 200
    assert response["Strict-Transport-Security"].startswith("max-age=31536000")


def test_forwarded_proto_from_an_untrusted_peer_is_ignored(api):
    response = api.get("/health", secure=False, HTTP_X_FORWARDED_PROTO="https")

    assert response.status_code == 403


def test_forwarded_proto_from_a_trusted_proxy_is_believed(api, settings):
    import ipaddress

    settings.TRUSTED_PROXIES = [ipaddress.ip_network("127.0.0.0/8")]

    response = api.get("/health", secure=False, HTTP_X_FORWARDED_PROTO="https")

    assert response.status_code == 200
