"""Every `/api/` answer is for one caller: `Cache-Control: no-store` and `Vary: Authorization`
(docs/decisions.md#caching-of-api-responses), whether a view, DRF's auth or a middleware gave it."""

from __future__ import annotations

import pytest
from django.test import override_settings


def _private(response) -> None:
    assert response["Cache-Control"] == "no-store", response.headers
    assert "Authorization" in [part.strip() for part in response["Vary"].split(",")], response.headers


@pytest.mark.django_db
def test_a_token_answer_is_never_stored(api, alice):
    response = api.post("/api/v1/auth/token", {"email": alice.email, "password": "wrong"}, format="json")
    _private(response)


def test_per_user_reads_and_key_bodies_are_private(alice_api):
    _private(alice_api.get("/api/v1/auth/me"))
    created = alice_api.post("/api/v1/auth/api-keys", {"name": "ci"}, format="json")
    assert created.status_code == 201, created.content
    _private(created)
    _private(alice_api.get("/api/v1/tasks?scope=open"))


@pytest.mark.django_db
def test_errors_before_any_view_are_private_too(api):
    _private(api.get("/api/v1/no-such-thing"))
    _private(api.get("/api/v1/auth/me"))  # 401


def test_pages_outside_the_api_keep_their_own_caching(api):
    response = api.get("/openapi.json")
    assert response.status_code == 200
    assert response["Cache-Control"] != "no-store"


@pytest.mark.django_db
@override_settings(RATELIMIT_ENABLE=True)
def test_a_rate_limited_answer_is_private(api):
    for _ in range(400):
        response = api.post("/api/v1/auth/token", {"email": "x@example.com", "password": "p"}, format="json")
        if response.status_code == 429:
            break
    assert response.status_code == 429
    _private(response)
