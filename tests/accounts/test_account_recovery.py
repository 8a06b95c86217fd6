"""Accounts a user can recover and revoke: who am I, change the e-mail, close the account, change the
password, log out, reset a forgotten password; refresh chains keep their login's expiry
(see docs/decisions.md#identity-and-authentication)."""

from __future__ import annotations

import re
from datetime import timedelta

import pytest
from django.utils import timezone
from rest_framework_simplejwt.token_blacklist.models import OutstandingToken
from rest_framework_simplejwt.tokens import AccessToken, RefreshToken

from accounts.models import ApiKey, User
from accounts.selectors import RECOVERY_REVIEW_PERIOD
from accounts.services import api_key_create
from accounts.throttle import LOGIN_ACCOUNT_CLIENT, LOGIN_CLIENT
from tests.conftest import client_with_token
from tests.support.factories import DEFAULT_PASSWORD, UserFactory
from tests.support.ratelimit import login_window, one_window

pytestmark = pytest.mark.django_db

NEW = "a fresh long passphrase"


def login(api, email="alice@example.com", password=DEFAULT_PASSWORD) -> dict:
    response = api.post("/api/v1/auth/token", {"email": email, "password": password})
    assert response.status_code == 200, response.content
    return response.json()


def refresh(api, token: str):
    return api.post("/api/v1/auth/token/refresh", {"refresh": token})


def locs(response) -> set[tuple]:
    return {tuple(e["loc"]) for e in response.json()["detail"]}


# --- /auth/me ----------------------------------------------------------------------------------------


def test_me_shows_who_you_are(alice, api):
    me = client_with_token(login(api)["access"]).get("/api/v1/auth/me")

    assert me.status_code == 200
    assert me.json()["email"] == "alice@example.com" and me.json()["id"] == str(alice.id)


def test_me_is_jwt_only(alice):
    key = api_key_create(user=alice, name="k").raw

    assert client_with_token(key).get("/api/v1/auth/me").status_code == 403


def test_changing_the_email_needs_the_current_password_and_keeps_it_as_given(alice, alice_api):
    wrong = alice_api.patch("/api/v1/auth/me", {"email": "a2@example.com", "current_password": "nope-nope"})
    assert wrong.status_code == 422 and locs(wrong) == {("body", "current_password")}
    missing = alice_api.patch("/api/v1/auth/me", {"email": "a2@example.com"})
    assert missing.status_code == 422 and ("body", "current_password") in locs(missing)

    ok = alice_api.patch("/api/v1/auth/me", {"email": "A2@Example.COM", "current_password": DEFAULT_PASSWORD})

    assert ok.status_code == 200 and ok.json()["email"] == "A2@Example.COM"
    alice.refresh_from_db()
    assert (alice.email, alice.email_key) == ("A2@Example.COM", "a2@example.com")
    assert User.objects.get_by_natural_key("a2@EXAMPLE.com") == alice


def test_changing_the_email_to_a_taken_one_is_409(alice, alice_api, bob):
    response = alice_api.patch("/api/v1/auth/me", {"email": "BOB@example.com", "current_password": DEFAULT_PASSWORD})

    assert response.status_code == 409 and response.json()["code"] == "email_taken"


def test_closing_the_account_needs_the_password_and_revokes_everything(alice, api):
    pair = login(api)
    session = client_with_token(pair["access"])
    key = api_key_create(user=alice, name="ci").raw

    wrong = session.delete("/api/v1/auth/me", {"current_password": "nope-nope"}, format="json")
    assert wrong.status_code == 422 and locs(wrong) == {("body", "current_password")}
    assert session.delete("/api/v1/auth/me", {}, format="json").status_code == 422

    assert session.delete("/api/v1/auth/me", {"current_password": DEFAULT_PASSWORD}, format="json").status_code == 204

    alice.refresh_from_db()
    assert not alice.is_active and not alice.has_usable_password()
    assert alice.email != "alice@example.com"  # the address is free again
    assert not ApiKey.objects.active().filter(user=alice).exists()
    assert session.get("/api/v1/auth/me").status_code == 401
    assert refresh(api, pair["refresh"]).status_code == 401
    assert client_with_token(key).get("/api/v1/tasks").status_code == 401
    assert (
        api.post("/api/v1/auth/token", {"email": "alice@example.com", "password": DEFAULT_PASSWORD}).status_code == 401
    )
    again = api.post("/api/v1/auth/register", {"email": "alice@example.com", "password": "correct horse battery"})
    assert again.status_code == 201


# --- password change -----------------------------------------------------------------------------------


def test_password_change_revokes_every_refresh_and_access_token(alice, api):
    first, second = login(api), login(api)

    response = client_with_token(first["access"]).post(
        "/api/v1/auth/password/change", {"current_password": DEFAULT_PASSWORD, "new_password": NEW}
    )

    assert response.status_code == 200
    fresh = response.json()
    assert set(fresh) == {"access", "refresh", "token_type", "expires_in"}
    for old in (first, second):
        assert refresh(api, old["refresh"]).status_code == 401
        assert client_with_token(old["access"]).get("/api/v1/auth/me").status_code == 401
    assert client_with_token(fresh["access"]).get("/api/v1/auth/me").status_code == 200
    assert refresh(api, fresh["refresh"]).status_code == 200
    login(api, password=NEW)


def test_password_change_refuses_a_wrong_current_or_a_weak_new_password(alice, alice_api):
    wrong = alice_api.post("/api/v1/auth/password/change", {"current_password": "nope-nope", "new_password": NEW})
    assert wrong.status_code == 422 and locs(wrong) == {("body", "current_password")}

    weak = alice_api.post(
        "/api/v1/auth/password/change", {"current_password": DEFAULT_PASSWORD, "new_password": "12345678"}
    )
    assert weak.status_code == 422
    assert {(tuple(e["loc"]), e["type"]) for e in weak.json()["detail"]} == {(("body", "new_password"), "value_error")}
    like_email = alice_api.post(
        "/api/v1/auth/password/change", {"current_password": DEFAULT_PASSWORD, "new_password": "alice@example.com"}
    )
    assert like_email.status_code == 422
    alice.refresh_from_db()
    assert alice.check_password(DEFAULT_PASSWORD)


def test_wrong_current_passwords_count_as_failed_logins(alice, alice_api):
    with one_window(login_window(LOGIN_ACCOUNT_CLIENT)):
        statuses = [
            alice_api.post(
                "/api/v1/auth/password/change", {"current_password": "nope-nope", "new_password": NEW}
            ).status_code
            for _ in range(12)
        ]

    assert statuses[:10] == [422] * 10 and statuses[-1] == 429


# --- logout ----------------------------------------------------------------------------------------------


def test_logout_revokes_that_refresh_token_only(alice, api):
    one, two = login(api), login(api)
    session = client_with_token(one["access"])

    assert session.post("/api/v1/auth/logout", {"refresh": one["refresh"]}).status_code == 204

    assert refresh(api, one["refresh"]).status_code == 401
    assert refresh(api, two["refresh"]).status_code == 200
    again = session.post("/api/v1/auth/logout", {"refresh": one["refresh"]})
    assert again.status_code == 422 and locs(again) == {("body", "refresh")}


def test_logout_refuses_someone_elses_or_a_malformed_token(alice, bob, api):
    bobs = login(api, "bob@example.com")
    session = client_with_token(login(api)["access"])

    for token in (bobs["refresh"], "not-a-token", bobs["access"]):
        response = session.post("/api/v1/auth/logout", {"refresh": token})
        assert response.status_code == 422 and locs(response) == {("body", "refresh")}
    assert refresh(api, bobs["refresh"]).status_code == 200


# --- password reset --------------------------------------------------------------------------------------


def _reset(api, email, django_capture_on_commit_callbacks):
    with django_capture_on_commit_callbacks(execute=True):
        return api.post("/api/v1/auth/password/reset", {"email": email})


def _token_in(message) -> str:
    return re.search(r'"token": "([^"]+)"', message.body).group(1)


def test_reset_answers_known_and_unknown_addresses_alike(alice, api, mailoutbox, django_capture_on_commit_callbacks):
    known = _reset(api, "ALICE@example.com", django_capture_on_commit_callbacks)
    unknown = _reset(api, "nobody@example.com", django_capture_on_commit_callbacks)

    assert known.status_code == unknown.status_code == 202
    assert known.json() == unknown.json()
    assert [m.to for m in mailoutbox] == [["alice@example.com"]]


def test_reset_confirm_sets_the_password_once_and_revokes_every_session(
    alice, api, mailoutbox, django_capture_on_commit_callbacks
):
    session = login(api)
    _reset(api, "alice@example.com", django_capture_on_commit_callbacks)
    token = _token_in(mailoutbox[0])
    assert "." in token and token in mailoutbox[0].body

    response = api.post("/api/v1/auth/password/reset/confirm", {"token": token, "new_password": NEW})

    assert response.status_code == 204
    assert refresh(api, session["refresh"]).status_code == 401
    assert client_with_token(session["access"]).get("/api/v1/auth/me").status_code == 401
    login(api, password=NEW)
    reused = api.post("/api/v1/auth/password/reset/confirm", {"token": token, "new_password": "another passphrase x"})
    assert reused.status_code == 422 and locs(reused) == {("body", "token")}


def test_reset_confirm_refuses_bad_tokens_and_weak_passwords(
    alice, api, mailoutbox, django_capture_on_commit_callbacks
):
    _reset(api, "alice@example.com", django_capture_on_commit_callbacks)
    token = _token_in(mailoutbox[0])
    for bad in (
        "x",
        "x.y",
        token[:-1] + ("a" if token[-1] != "a" else "b"),
        "." + token,
        "////." + token.split(".")[1],
    ):
        response = api.post("/api/v1/auth/password/reset/confirm", {"token": bad, "new_password": NEW})
        assert response.status_code == 422 and locs(response) == {("body", "token")}, bad

    weak = api.post("/api/v1/auth/password/reset/confirm", {"token": token, "new_password": "12345678"})
    assert weak.status_code == 422 and locs(weak) == {("body", "new_password")}


def test_reset_tokens_expire(alice, api, mailoutbox, django_capture_on_commit_callbacks, settings):
    _reset(api, "alice@example.com", django_capture_on_commit_callbacks)
    token = _token_in(mailoutbox[0])
    settings.PASSWORD_RESET_TIMEOUT = -1

    response = api.post("/api/v1/auth/password/reset/confirm", {"token": token, "new_password": NEW})

    assert response.status_code == 422


def test_reset_mails_at_most_once_a_minute_per_account(alice, api, mailoutbox, django_capture_on_commit_callbacks):
    for _ in range(3):
        assert _reset(api, "alice@example.com", django_capture_on_commit_callbacks).status_code == 202

    assert len(mailoutbox) == 1


# --- the refresh chain -----------------------------------------------------------------------------------


def test_a_refresh_chain_keeps_the_expiry_of_its_login(alice, api):
    login_token = RefreshToken.for_user(alice)
    login_token.set_exp(lifetime=timedelta(hours=1))  # a login an almost full session ago
    first, expiry = str(login_token), login_token["exp"]

    token = first
    for _ in range(3):
        response = refresh(api, token)
        assert response.status_code == 200
        token = response.json()["refresh"]
        assert RefreshToken(token)["exp"] == expiry
    row = OutstandingToken.objects.get(jti=RefreshToken(token)["jti"])
    assert int(row.expires_at.timestamp()) == expiry and row.token == token


def test_reset_of_an_inactive_or_unknown_user_sends_nothing(api, mailoutbox, django_capture_on_commit_callbacks):
    UserFactory(email="gone@example.com", is_active=False)

    assert _reset(api, "gone@example.com", django_capture_on_commit_callbacks).status_code == 202
    assert mailoutbox == [] and User.objects.count() == 1


def test_make_runs_mail_backend_writes_one_file_per_message_and_logs_its_path(settings, tmp_path, caplog):
    from django.core.mail import get_connection, send_mail

    settings.EMAIL_BACKEND = "accounts.mail.FilePerMessageBackend"
    settings.EMAIL_FILE_PATH = str(tmp_path / "mail")
    caplog.set_level("INFO", logger="accounts.mail")
    connection = get_connection()

    for n in range(2):
        send_mail(f"subject {n}", "body", None, ["x@example.com"], connection=connection)

    files = sorted((tmp_path / "mail").iterdir())
    assert len(files) == 2
    assert {str(f) for f in files} == {str(r.args[1]) for r in caplog.records if r.name == "accounts.mail"}
    assert b"subject 0" in files[0].read_bytes() or b"subject 0" in files[1].read_bytes()


def test_no_access_token_outlives_its_session(alice, api):
    login_token = RefreshToken.for_user(alice)
    login_token.set_exp(lifetime=timedelta(minutes=5))  # the session ends in 5 minutes

    pair = refresh(api, str(login_token)).json()

    assert AccessToken(pair["access"])["exp"] == login_token["exp"]
    assert 0 < pair["expires_in"] <= 5 * 60


# --- what a reset shuts out, and what it leaves for the owner to review ------------------------------------


def _reset_token(api, mailoutbox, django_capture_on_commit_callbacks, email="alice@example.com") -> str:
    _reset(api, email, django_capture_on_commit_callbacks)
    return _token_in(mailoutbox[-1])


def _confirm(api, token, django_capture_on_commit_callbacks, password=NEW):
    with django_capture_on_commit_callbacks(execute=True):
        return api.post("/api/v1/auth/password/reset/confirm", {"token": token, "new_password": password})


def test_reset_confirm_revokes_every_api_key(alice, api, mailoutbox, django_capture_on_commit_callbacks):
    old_key = client_with_token(api_key_create(user=alice, name="ci").raw)
    assert old_key.get("/api/v1/tasks").status_code == 200
    token = _reset_token(api, mailoutbox, django_capture_on_commit_callbacks)
    assert "revokes every API key" in mailoutbox[0].body

    assert _confirm(api, token, django_capture_on_commit_callbacks).status_code == 204

    for path in ("/api/v1/tasks", "/api/v1/agents", "/api/v1/webhooks/subscriptions"):
        assert old_key.get(path).status_code == 401, path
    assert not ApiKey.objects.active().filter(user=alice).exists()
    assert ApiKey.objects.filter(user=alice).count() == 1  # revoked, kept for the record


def test_after_a_reset_the_owner_is_told_what_to_review_by_mail_and_on_me(
    alice, bob, api, mailoutbox, django_capture_on_commit_callbacks
):
    # Left behind by whoever held the account: an agent and a subscription, made with an API key.
    intruder = client_with_token(api_key_create(user=alice, name="intruder").raw)
    agent = intruder.post(
        "/api/v1/agents", {"name": "Mole", "endpoint_url": "https://agents.example.net/mole"}, format="json"
    )
    hook = intruder.post(
        "/api/v1/webhooks/subscriptions",
        {"url": "https://hooks.example.net/spy", "events": ["task.created"]},
        format="json",
    )
    assert agent.status_code == hook.status_code == 201, (agent.content, hook.content)
    client_with_token(api_key_create(user=bob, name="b").raw).post(
        "/api/v1/agents", {"name": "Bobs", "endpoint_url": "https://agents.example.org/bob"}, format="json"
    )
    before = login(api)
    assert client_with_token(before["access"]).get("/api/v1/auth/me").json()["review_after_recovery"] is None
    token = _reset_token(api, mailoutbox, django_capture_on_commit_callbacks)

    assert _confirm(api, token, django_capture_on_commit_callbacks).status_code == 204

    expected = [
        {"kind": "webhook_subscription", "id": hook.json()["id"], "url": "https://hooks.example.net/spy"},
        {"kind": "agent_endpoint", "id": agent.json()["id"], "url": "https://agents.example.net/mole"},
    ]
    notice = mailoutbox[-1]
    assert notice.to == ["alice@example.com"] and notice.subject == "Your password was reset"
    for item in expected:
        assert f"{item['id']}: {item['url']}" in notice.body
    assert "every API key revoked" in notice.body and "agents.example.org" not in notice.body
    review = client_with_token(login(api, password=NEW)["access"]).get("/api/v1/auth/me").json()
    review = review["review_after_recovery"]
    assert sorted(review["items"], key=lambda i: i["kind"]) == sorted(expected, key=lambda i: i["kind"])
    alice.refresh_from_db()
    assert review["recovered_at"].startswith(alice.password_reset_at.strftime("%Y-%m-%dT%H:%M:%S"))


def test_the_review_on_me_ends_after_its_period(alice, alice_api):
    User.objects.filter(pk=alice.pk).update(password_reset_at=timezone.now() - RECOVERY_REVIEW_PERIOD)

    assert alice_api.get("/api/v1/auth/me").json()["review_after_recovery"] is None


def test_a_newer_reset_mail_makes_the_older_token_worthless(
    alice, api, mailoutbox, django_capture_on_commit_callbacks, settings
):
    settings.PASSWORD_RESET_MAIL_INTERVAL_SECONDS = 0
    older = _reset_token(api, mailoutbox, django_capture_on_commit_callbacks)
    newer = _reset_token(api, mailoutbox, django_capture_on_commit_callbacks)
    assert older != newer

    refused = api.post("/api/v1/auth/password/reset/confirm", {"token": older, "new_password": NEW})

    assert refused.status_code == 422 and locs(refused) == {("body", "token")}
    assert _confirm(api, newer, django_capture_on_commit_callbacks).status_code == 204


# --- e-mail change: probing costs guesses, the old address is told ------------------------------------------


def test_probing_taken_addresses_through_the_email_change_is_throttled(alice, alice_api, bob):
    body = {"email": "bob@example.com", "current_password": DEFAULT_PASSWORD}
    with one_window(login_window(LOGIN_CLIENT)):
        statuses = [alice_api.patch("/api/v1/auth/me", body).status_code for _ in range(LOGIN_CLIENT.limit + 2)]

    assert statuses[: LOGIN_CLIENT.limit] == [409] * LOGIN_CLIENT.limit
    assert statuses[LOGIN_CLIENT.limit :] == [429, 429]


def test_a_free_address_costs_no_guess(alice, alice_api):
    with one_window(login_window(LOGIN_CLIENT)):
        for n in range(LOGIN_CLIENT.limit + 2):
            body = {"email": f"alice{n}@example.com", "current_password": DEFAULT_PASSWORD}
            assert alice_api.patch("/api/v1/auth/me", body).status_code == 200


def test_the_old_address_is_told_of_an_email_change(alice, alice_api, mailoutbox, django_capture_on_commit_callbacks):
    with django_capture_on_commit_callbacks(execute=True):
        response = alice_api.patch("/api/v1/auth/me", {"email": "a2@example.com", "current_password": DEFAULT_PASSWORD})

    assert response.status_code == 200
    [notice] = [m for m in mailoutbox if m.to == ["alice@example.com"]]
    assert str(alice.id) in notice.body and "a2@example.com" not in notice.body
    assert [m.subject for m in mailoutbox if m.to == ["a2@example.com"]] == ["Verify your e-mail address"]


def test_a_refused_email_change_mails_no_one(alice, alice_api, bob, mailoutbox, django_capture_on_commit_callbacks):
    with django_capture_on_commit_callbacks(execute=True):
        alice_api.patch("/api/v1/auth/me", {"email": "bob@example.com", "current_password": DEFAULT_PASSWORD})
        alice_api.patch("/api/v1/auth/me", {"email": "a2@example.com", "current_password": "nope-nope"})

    assert mailoutbox == []
