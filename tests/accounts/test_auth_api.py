from __future__ import annotations

import hashlib
import re
import time
from datetime import timedelta

import pytest
from rest_framework_simplejwt.tokens import AccessToken

from accounts.models import ApiKey, User
from tests.conftest import client_with_token
from tests.support.factories import DEFAULT_PASSWORD
from tests.support.probe_urls import PROBE

pytestmark = [pytest.mark.django_db, pytest.mark.urls("tests.support.probe_urls")]


def test_register_creates_a_user(api):
    response = api.post("/api/v1/auth/register", {"email": "New@Example.com", "password": "correct horse battery"})

    assert response.status_code == 201
    body = response.json()
    assert (body["email"], body["email_verified"], body["credits"]) == ("New@Example.com", False, 0)
    user = User.objects.get(id=body["id"])
    assert user.check_password("correct horse battery")
    assert user.email_key == "new@example.com"


def test_register_refuses_a_taken_email_in_any_case(api, alice):
    response = api.post("/api/v1/auth/register", {"email": "ALICE@example.com", "password": "correct horse battery"})

    assert response.status_code == 409
    assert response.json()["code"] == "email_taken"
    assert User.objects.count() == 1


def test_register_refuses_a_weak_password_with_422(api):
    response = api.post("/api/v1/auth/register", {"email": "x@example.com", "password": "12345678"})

    assert response.status_code == 422
    types = {(e["loc"][1], e["type"]) for e in response.json()["detail"]}
    assert ("password", "value_error") in types
    assert not User.objects.exists()


def test_token_pair(api, alice):
    response = api.post("/api/v1/auth/token", {"email": "alice@example.com", "password": DEFAULT_PASSWORD})

    assert response.status_code == 200
    body = response.json()
    assert body["token_type"] == "Bearer"
    assert body["expires_in"] == 15 * 60
    me = client_with_token(body["access"]).get("/api/v1/auth/api-keys")
    assert me.status_code == 200


def test_token_refuses_a_wrong_password(api, alice):
    response = api.post("/api/v1/auth/token", {"email": "alice@example.com", "password": "wrong-password"})

    assert response.status_code == 401
    assert response.json()["code"] == "authentication_failed"


def test_refresh_rotates_and_a_used_refresh_token_is_refused(api, alice):
    pair = api.post("/api/v1/auth/token", {"email": "alice@example.com", "password": DEFAULT_PASSWORD}).json()

    first = api.post("/api/v1/auth/token/refresh", {"refresh": pair["refresh"]})
    again = api.post("/api/v1/auth/token/refresh", {"refresh": pair["refresh"]})

    assert first.status_code == 200
    assert first.json()["refresh"] != pair["refresh"]
    assert again.status_code == 401
    assert again.json()["code"] == "authentication_failed"
    assert api.post("/api/v1/auth/token/refresh", {"refresh": first.json()["refresh"]}).status_code == 200


def test_refresh_refuses_garbage(api):
    response = api.post("/api/v1/auth/token/refresh", {"refresh": "garbage"})

    assert response.status_code == 401


def test_expired_access_token_is_401(alice):
    token = AccessToken.for_user(alice)
    token.set_exp(lifetime=-timedelta(seconds=1))

    response = client_with_token(str(token)).get("/api/v1/auth/api-keys")

    assert response.status_code == 401
    assert response.json()["code"] == "authentication_failed"


def test_an_access_token_accepted_before_is_refused_once_it_expires(alice):
    """This process remembers the tokens it has checked (accounts.authentication), never past their expiry."""
    token = AccessToken.for_user(alice)
    token.set_exp(lifetime=timedelta(seconds=2))
    client = client_with_token(str(token))
    assert client.get("/api/v1/auth/api-keys").status_code == 200
    assert client.get("/api/v1/auth/api-keys").status_code == 200

    time.sleep(max(0.0, token["exp"] - time.time()) + 0.05)  # the clock is the event: past the expiry
    response = client.get("/api/v1/auth/api-keys")

    assert response.status_code == 401
    assert response.json()["code"] == "authentication_failed"


def test_token_of_a_deactivated_user_is_401(alice, alice_api):
    User.objects.filter(pk=alice.pk).update(is_active=False)

    assert alice_api.get("/api/v1/auth/api-keys").status_code == 401


def test_token_of_a_deleted_user_is_401_and_the_user_is_loaded_as_the_orm_loads_it(alice, alice_api, bob, bob_api):
    """The JWT's user row is read through a compiled query (accounts.authentication): same user, same errors."""
    from rest_framework_simplejwt.authentication import JWTAuthentication
    from rest_framework_simplejwt.tokens import AccessToken

    from accounts.authentication import _JWTAuthentication

    token = AccessToken.for_user(alice)
    ours, simplejwt = _JWTAuthentication().get_user(token), JWTAuthentication().get_user(token)
    assert [getattr(ours, f.attname) for f in User._meta.concrete_fields] == [
        getattr(simplejwt, f.attname) for f in User._meta.concrete_fields
    ]
    assert not ours._state.adding and ours._state.db == "default"

    User.objects.filter(pk=bob.pk).delete()
    response = bob_api.get("/api/v1/auth/api-keys")

    assert response.status_code == 401 and response.json()["code"] == "authentication_failed"
    assert alice_api.get("/api/v1/auth/api-keys").status_code == 200


def test_api_key_lifecycle(alice_api):
    created = alice_api.post("/api/v1/auth/api-keys", {"name": "ci"})

    assert created.status_code == 201
    body = created.json()
    raw = body["key"]
    assert re.fullmatch(r"bmk_[a-z0-9]{8}_[A-Za-z0-9_-]{32,}", raw)
    assert raw.split("_")[1] == body["prefix"]
    stored = ApiKey.objects.get(id=body["id"])
    assert stored.key_hash == hashlib.sha256(raw.encode()).hexdigest()
    assert raw not in str(ApiKey.objects.filter(id=body["id"]).values().get())

    listed = alice_api.get("/api/v1/auth/api-keys").json()
    assert listed["total"] == 1
    assert "key" not in listed["items"][0]

    with_key = client_with_token(raw)
    assert with_key.get(PROBE).status_code == 200
    stored.refresh_from_db()
    assert stored.last_used_at is not None

    assert alice_api.delete(f"/api/v1/auth/api-keys/{body['id']}").status_code == 204
    refused = with_key.get(PROBE)
    assert refused.status_code == 401
    assert refused.json()["code"] == "authentication_failed"
    assert alice_api.get("/api/v1/auth/api-keys").json()["total"] == 0


def test_a_key_with_a_right_prefix_and_wrong_secret_is_refused(alice_api):
    raw = alice_api.post("/api/v1/auth/api-keys", {"name": "ci"}).json()["key"]
    forged = raw[:-4] + ("aaaa" if not raw.endswith("aaaa") else "bbbb")

    assert client_with_token(forged).get(PROBE).status_code == 401


def test_api_key_on_a_jwt_only_endpoint_is_403(alice_key_api):
    response = alice_key_api.get("/api/v1/auth/api-keys")

    assert response.status_code == 403
    assert response.json() == {
        "detail": "API keys cannot be used on this endpoint; use a user access token.",
        "code": "api_key_not_allowed",
    }


def test_another_users_key_cannot_be_revoked(alice_api, bob_api):
    key_id = alice_api.post("/api/v1/auth/api-keys", {"name": "mine"}).json()["id"]

    assert bob_api.delete(f"/api/v1/auth/api-keys/{key_id}").status_code == 404
    assert ApiKey.objects.active().filter(id=key_id).exists()
