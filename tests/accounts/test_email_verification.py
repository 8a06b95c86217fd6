"""A registered address is verified by a mailed token before the account may create API keys, start a payout
account or spend sign-up credits; a changed address is verified again; a completed reset verifies too, which
is how the owner of an address someone else registered takes it back (docs/decisions.md#identity-and-authentication)."""

from __future__ import annotations

import re
import threading
from io import StringIO

import pytest
from django.core import signing
from django.core.management import CommandError, call_command
from django.db import connections

from accounts.models import ApiKey, User
from accounts.verification import email_verification_token_make, email_verified_mark
from assistant.models import CreditTransaction
from tests.conftest import client_with_token, jwt_for
from tests.support.credits import credits_of
from tests.support.factories import DEFAULT_PASSWORD, UserFactory

pytestmark = pytest.mark.django_db

PASSWORD = "correct horse battery"
VERIFY = "/api/v1/auth/email/verify"
RESEND = "/api/v1/auth/email/verify/resend"
SUBJECT = "Verify your e-mail address"


def register(api, email: str, capture) -> tuple[User, object]:
    with capture(execute=True):
        response = api.post("/api/v1/auth/register", {"email": email, "password": PASSWORD})
    assert response.status_code == 201, response.content
    user = User.objects.get(pk=response.json()["id"])
    return user, client_with_token(jwt_for(user))


def token_in(message) -> str:
    return re.search(r'"token": "([^"]+)"', message.body).group(1)


def verification_mails(mailoutbox, to: str) -> list:
    return [m for m in mailoutbox if m.subject == SUBJECT and m.to == [to]]


def test_a_new_account_is_mailed_a_token_and_starts_unverified_without_credits(
    api, mailoutbox, django_capture_on_commit_callbacks, settings
):
    settings.SIGNUP_CREDITS = 10
    user, session = register(api, "new@example.com", django_capture_on_commit_callbacks)

    [mail] = mailoutbox
    assert (mail.subject, mail.to) == (SUBJECT, ["new@example.com"])
    assert f"POST {settings.PUBLIC_BASE_URL}/api/v1/auth/email/verify" in mail.body
    me = session.get("/api/v1/auth/me").json()
    assert (me["email_verified"], me["credits"]) == (False, 0)
    assert not CreditTransaction.objects.filter(user=user).exists()


def test_unverified_it_cannot_create_api_keys_nor_start_a_payout_account(
    api, mailoutbox, django_capture_on_commit_callbacks
):
    user, session = register(api, "new@example.com", django_capture_on_commit_callbacks)

    key = session.post("/api/v1/auth/api-keys", {"name": "ci"})
    payout = session.post("/api/v1/payouts/account", {})

    for response in (key, payout):
        assert response.status_code == 403, response.content
        assert response.json() == {
            "detail": "Verify your e-mail address first: POST /api/v1/auth/email/verify with the mailed token.",
            "code": "email_unverified",
        }
    assert not ApiKey.objects.filter(user=user).exists()


def test_the_token_verifies_grants_the_signup_credits_once_and_opens_api_keys(
    api, mailoutbox, django_capture_on_commit_callbacks, settings
):
    settings.SIGNUP_CREDITS = 12
    user, session = register(api, "new@example.com", django_capture_on_commit_callbacks)
    token = token_in(mailoutbox[0])

    verified = session.post(VERIFY, {"token": token})
    again = session.post(VERIFY, {"token": token})  # a second click changes nothing

    assert verified.status_code == again.status_code == 200, verified.content
    assert (verified.json()["email_verified"], verified.json()["credits"]) == (True, 12)
    assert again.json()["credits"] == 12
    [grant] = CreditTransaction.objects.filter(user=user)
    assert (grant.kind, grant.delta, grant.balance_after) == ("grant", 12, 12)
    assert session.post("/api/v1/auth/api-keys", {"name": "ci"}).status_code == 201


def test_it_refuses_bad_expired_and_other_accounts_tokens(
    api, bob_api, mailoutbox, django_capture_on_commit_callbacks, settings
):
    user, session = register(api, "new@example.com", django_capture_on_commit_callbacks)
    token = token_in(mailoutbox[0])
    value, stamp, signature = token.split(":")
    forged = signing.TimestampSigner(salt="another salt").sign(value)

    for client, bad in (
        (session, "x"),
        (session, f"{value}:{stamp}:{signature[:-1]}{'A' if signature[-1] != 'A' else 'B'}"),
        (session, forged),
        (session, signing.TimestampSigner(salt="accounts.verification.email").sign("not-a-uuid.x")),
        (bob_api, token),  # another account cannot spend it, even with the mail in hand
    ):
        response = client.post(VERIFY, {"token": bad})
        assert response.status_code == 422, bad
        assert [e["loc"] for e in response.json()["detail"]] == [["body", "token"]]

    settings.EMAIL_VERIFICATION_TIMEOUT_SECONDS = -1
    assert session.post(VERIFY, {"token": token}).status_code == 422
    user.refresh_from_db()
    assert not user.email_verified


def test_a_changed_address_is_unverified_until_its_own_token_comes_back(
    alice, alice_api, mailoutbox, django_capture_on_commit_callbacks, settings
):
    settings.SIGNUP_CREDITS = 10
    old_token = email_verification_token_make(user=alice)
    with django_capture_on_commit_callbacks(execute=True):
        body = {"email": "alice@new.example", "current_password": DEFAULT_PASSWORD}
        changed = alice_api.patch("/api/v1/auth/me", body)

    assert changed.status_code == 200 and changed.json()["email_verified"] is False
    [mail] = verification_mails(mailoutbox, "alice@new.example")
    assert [m.to for m in mailoutbox if m.subject != SUBJECT] == [["alice@example.com"]]  # the old one's notice
    assert alice_api.post("/api/v1/auth/api-keys", {"name": "ci"}).status_code == 403
    assert alice_api.post(VERIFY, {"token": old_token}).status_code == 422  # mailed to the old address

    verified = alice_api.post(VERIFY, {"token": token_in(mail)})

    assert verified.status_code == 200 and verified.json()["email_verified"] is True
    assert verified.json()["credits"] == 0  # the sign-up grant is the first verification's, not each address's
    assert not CreditTransaction.objects.filter(user=alice).exists()


def test_a_token_stops_working_when_the_address_changes(alice, alice_api, django_capture_on_commit_callbacks):
    User.objects.filter(pk=alice.pk).update(email_verified_at=None)
    alice.refresh_from_db()
    token = email_verification_token_make(user=alice)
    alice_api.patch("/api/v1/auth/me", {"email": "other@example.com", "current_password": DEFAULT_PASSWORD})

    assert alice_api.post(VERIFY, {"token": token}).status_code == 422
    alice.refresh_from_db()
    assert (alice.email, alice.email_verified) == ("other@example.com", False)


def test_resend_mails_again_at_most_once_a_minute_and_not_when_verified(
    api, alice_api, mailoutbox, django_capture_on_commit_callbacks, settings
):
    _user, session = register(api, "new@example.com", django_capture_on_commit_callbacks)
    with django_capture_on_commit_callbacks(execute=True):
        soon = session.post(RESEND)
    assert soon.status_code == 429 and soon.json()["code"] == "rate_limited"
    assert 1 <= int(soon["Retry-After"]) <= 60
    assert len(mailoutbox) == 1

    settings.EMAIL_VERIFICATION_MAIL_INTERVAL_SECONDS = 0  # as if the minute had passed
    with django_capture_on_commit_callbacks(execute=True):
        resent = session.post(RESEND)

    assert resent.status_code == 202 and resent.json()["detail"]
    assert len(verification_mails(mailoutbox, "new@example.com")) == 2
    assert session.post(VERIFY, {"token": token_in(mailoutbox[0])}).status_code == 200  # an earlier one works too

    verified_already = alice_api.post(RESEND)
    assert verified_already.status_code == 409 and verified_already.json()["code"] == "invalid_state"


def test_a_mail_for_an_address_changed_meanwhile_is_not_sent(alice, mailoutbox):
    from accounts.verification import email_verification_mail_send

    User.objects.filter(pk=alice.pk).update(email_verified_at=None)

    assert not email_verification_mail_send(user_id=str(alice.pk), email="gone@example.com", requested_at="t")
    assert email_verification_mail_send(user_id=str(alice.pk), email="alice@example.com", requested_at="t")
    assert not email_verification_mail_send(user_id=str(alice.pk), email="alice@example.com", requested_at="t")
    assert len(mailoutbox) == 1  # the task ran twice, one mail


# --- the owner of a squatted address ----------------------------------------------------------------------


def test_the_owner_takes_a_squatted_address_back_by_a_reset_and_the_squatter_keeps_nothing(
    api, mailoutbox, django_capture_on_commit_callbacks, settings
):
    settings.SIGNUP_CREDITS = 10
    squatted, squatter = register(api, "victim@example.com", django_capture_on_commit_callbacks)
    squatter_session = api.post("/api/v1/auth/token", {"email": "victim@example.com", "password": PASSWORD}).json()
    assert squatter.post("/api/v1/auth/api-keys", {"name": "x"}).status_code == 403  # nothing that outlives a session

    # The owner finds the address taken; the reset mail reaches only them.
    taken = api.post("/api/v1/auth/register", {"email": "victim@example.com", "password": "the owners passphrase"})
    assert taken.status_code == 409
    with django_capture_on_commit_callbacks(execute=True):
        api.post("/api/v1/auth/password/reset", {"email": "victim@example.com"})
    [reset] = [m for m in mailoutbox if m.subject == "Reset your password"]
    reset_token = re.search(r'"token": "([^"]+)"', reset.body).group(1)
    with django_capture_on_commit_callbacks(execute=True):
        confirmed = api.post(
            "/api/v1/auth/password/reset/confirm", {"token": reset_token, "new_password": "the owners passphrase"}
        )

    assert confirmed.status_code == 204
    assert api.post("/api/v1/auth/token/refresh", {"refresh": squatter_session["refresh"]}).status_code == 401
    assert client_with_token(squatter_session["access"]).get("/api/v1/auth/me").status_code == 401
    owner = api.post("/api/v1/auth/token", {"email": "victim@example.com", "password": "the owners passphrase"})
    session = client_with_token(owner.json()["access"])
    me = session.get("/api/v1/auth/me").json()
    assert (me["email_verified"], me["credits"]) == (True, 10)
    assert session.post("/api/v1/auth/api-keys", {"name": "mine"}).status_code == 201
    assert CreditTransaction.objects.filter(user=squatted, kind="grant").count() == 1


def test_following_the_mail_without_the_accounts_login_verifies_nothing(
    api, mailoutbox, django_capture_on_commit_callbacks
):
    register(api, "victim@example.com", django_capture_on_commit_callbacks)

    response = api.post(VERIFY, {"token": token_in(mailoutbox[0])})

    assert response.status_code == 401
    assert not User.objects.get_by_natural_key("victim@example.com").email_verified


# --- once, under concurrency ------------------------------------------------------------------------------


@pytest.mark.django_db(transaction=True)
def test_concurrent_verifications_grant_the_signup_credits_once(settings):
    settings.SIGNUP_CREDITS = 10
    user = UserFactory(email_verified_at=None, signup_grant_pending=True)
    start = threading.Barrier(6)
    results: list[bool] = []

    def verify():
        try:
            start.wait()
            results.append(email_verified_mark(user=User.objects.get(pk=user.pk)))
        finally:
            connections.close_all()

    threads = [threading.Thread(target=verify) for _ in range(6)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()

    assert sorted(results) == [False] * 5 + [True]
    user.refresh_from_db()
    assert (credits_of(user), user.email_verified, user.signup_grant_pending) == (10, True, False)
    assert CreditTransaction.objects.filter(user=user).count() == 1


# --- accounts made by an operator, accounts made before ---------------------------------------------------


def test_the_migration_marks_existing_accounts_verified_and_keys_them(capsys):
    import importlib

    from django.apps import apps

    migration = importlib.import_module("accounts.migrations.0006_email_keys_and_verified_accounts")
    plain, idn, clash, owner = UserFactory(), UserFactory(), UserFactory(), UserFactory(email="x@example.com")
    # Rows as the release before left them: casefolded, no key, unverified.
    User.objects.filter(pk=plain.pk).update(email="old.user@example.com", email_key=None, email_verified_at=None)
    User.objects.filter(pk=idn.pk).update(email="ann@faß.de", email_key=None, email_verified_at=None)
    User.objects.filter(pk=clash.pk).update(email="x@ex\u00adample.com", email_key=None, email_verified_at=None)

    migration.backfill(apps, None)

    keys = dict(User.objects.values_list("pk", "email_key"))
    assert (keys[plain.pk], keys[idn.pk], keys[owner.pk]) == (
        "old.user@example.com",
        "ann@xn--fa-hia.de",
        "x@example.com",
    )
    assert keys[clash.pk] is None and str(clash.pk) in capsys.readouterr().out  # UTS 46 drops the soft hyphen
    assert not User.objects.filter(email_verified_at=None).exists()


def test_a_row_without_a_key_still_logs_in(api):
    user = UserFactory()
    User.objects.filter(pk=user.pk).update(email="legacy@example.com", email_key=None)

    response = api.post("/api/v1/auth/token", {"email": "Legacy@Example.com", "password": DEFAULT_PASSWORD})

    assert response.status_code == 200


def test_make_runs_command_prints_the_newest_verification_token(
    api, settings, tmp_path, django_capture_on_commit_callbacks
):
    settings.EMAIL_BACKEND = "accounts.mail.FilePerMessageBackend"
    settings.EMAIL_FILE_PATH = str(tmp_path)
    with pytest.raises(CommandError, match="No verification mail"):
        call_command("email_verification_token", "ann@example.com", stdout=StringIO())
    _user, session = register(api, "Ann@Example.com", django_capture_on_commit_callbacks)

    out = StringIO()
    call_command("email_verification_token", "ANN@example.com", stdout=out)

    assert session.post(VERIFY, {"token": out.getvalue().strip()}).status_code == 200


def test_the_command_refuses_where_mail_is_not_written_to_files(settings):
    settings.EMAIL_BACKEND = "django.core.mail.backends.smtp.EmailBackend"

    with pytest.raises(CommandError, match="not written to files"):
        call_command("email_verification_token", "ann@example.com")


def test_staff_can_mark_an_address_verified_in_the_admin_and_find_it_in_any_case(admin_client, settings):
    settings.SIGNUP_CREDITS = 10
    user = UserFactory(email="Ann@Faß.de", email_verified_at=None, signup_grant_pending=True)

    found = admin_client.get("/admin/accounts/user/?q=ANN@FAß", secure=True)
    assert list(found.context["cl"].result_list) == [user]
    admin_client.post(
        "/admin/accounts/user/",
        {"action": "mark_email_verified", "_selected_action": [str(user.pk)]},
        secure=True,
    )

    user.refresh_from_db()
    assert (user.email_verified, credits_of(user)) == (True, 10)
