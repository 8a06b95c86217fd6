from __future__ import annotations

import pytest
from django.core.cache import cache
from rest_framework.test import APIClient
from rest_framework_simplejwt.tokens import RefreshToken

from accounts.services import api_key_create
from tests.support.factories import UserFactory
from tests.support.servers import serve_app_over_tls


class HttpsAPIClient(APIClient):
    """The API refuses plain HTTP, so test requests arrive over HTTPS unless a test says otherwise."""

    def generic(self, method, path, data="", content_type="application/octet-stream", secure=True, **extra):
        return super().generic(method, path, data, content_type, secure=secure, **extra)


@pytest.fixture(autouse=True)
def _clean_cache():
    """Rate-limit counters and cached overrides must not leak from one test into the next."""
    cache.clear()
    yield


@pytest.fixture
def api() -> HttpsAPIClient:
    return HttpsAPIClient()


def jwt_for(user) -> str:
    return str(RefreshToken.for_user(user).access_token)


def client_with_token(token: str) -> HttpsAPIClient:
    client = HttpsAPIClient()
    client.credentials(HTTP_AUTHORIZATION=f"Bearer {token}")
    return client


@pytest.fixture
def alice(db):
    return UserFactory(email="alice@example.com")


@pytest.fixture
def bob(db):
    return UserFactory(email="bob@example.com")


@pytest.fixture
def staff(db):
    return UserFactory(email="staff@example.com", is_staff=True, is_superuser=True)


@pytest.fixture
def alice_api(alice) -> HttpsAPIClient:
    """Alice with a JWT."""
    return client_with_token(jwt_for(alice))


@pytest.fixture
def bob_api(bob) -> HttpsAPIClient:
    return client_with_token(jwt_for(bob))


@pytest.fixture
def staff_api(staff) -> HttpsAPIClient:
    return client_with_token(jwt_for(staff))


@pytest.fixture
def alice_key_api(alice) -> HttpsAPIClient:
    """Alice with an API key."""
    return client_with_token(api_key_create(user=alice, name="tests").raw)


@pytest.fixture
def tls_server(tmp_path):
    """This app served over real TLS on a free loopback port (for the fuzzer and outbound loops)."""
    with serve_app_over_tls(tmp_path) as base_url:
        yield base_url
