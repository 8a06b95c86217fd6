"""Login guessing counts by the account actually matched, and by (account, client): spellings of one
address share one allowance, and guesses from one address never lock the owner out from another
(see docs/operations.md#login-throttling)."""

from __future__ import annotations

import pytest

from accounts.models import User
from accounts.throttle import LOGIN_ACCOUNT, LOGIN_ACCOUNT_CLIENT
from tests.support.factories import DEFAULT_PASSWORD, UserFactory
from tests.support.ratelimit import login_window, one_window

pytestmark = pytest.mark.django_db

TOKEN = "/api/v1/auth/token"


def login(api, email: str, password: str = "wrong-password", ip: str = "198.51.100.7"):
    return api.post(TOKEN, {"email": email, "password": password}, REMOTE_ADDR=ip)


def test_a_long_s_spelling_shares_the_accounts_allowance(api):
    UserFactory(email="sam@example.com")
    with one_window(login_window(LOGIN_ACCOUNT)):
        for n in range(LOGIN_ACCOUNT.limit):
            assert login(api, "sam@example.com", ip=f"198.51.100.{n + 1}").status_code == 401

        # U+017F LATIN SMALL LETTER LONG S is "s" after NFKC: the same account, so no fresh allowance.
        assert login(api, "\u017fam@example.com", ip="203.0.113.50").status_code == 429


def test_a_dotless_i_spelling_is_not_the_account(api):
    UserFactory(email="alice@example.com")
    for n in range(LOGIN_ACCOUNT.limit):
        assert login(api, "alice@example.com", ip=f"198.51.100.{n + 1}").status_code == 401

    # U+0131 is not "i" under NFKC + casefold: another (unknown) address, which cannot log in as alice.
    response = login(api, "al\u0131ce@example.com", DEFAULT_PASSWORD, ip="203.0.113.51")
    assert response.status_code == 401


def test_registration_keeps_the_address_and_lookup_normalises_nfkc_and_casefold(api):
    response = api.post(
        "/api/v1/auth/register", {"email": "\u017fTRASSE@Example.com", "password": "correct horse battery"}
    )

    assert response.status_code == 201
    assert response.json()["email"] == "\u017fTRASSE@Example.com"
    assert User.objects.get(pk=response.json()["id"]).email_key == "strasse@example.com"
    assert login(api, "STRASSE@example.COM", "correct horse battery").status_code == 200
    taken = api.post("/api/v1/auth/register", {"email": "Strasse@example.com", "password": "correct horse battery"})
    assert taken.status_code == 409


def test_guesses_from_one_address_never_lock_the_owner_out_from_another(api):
    UserFactory(email="owner@example.com")
    attacker = "198.51.100.66"
    with one_window(login_window(LOGIN_ACCOUNT_CLIENT)):
        for _ in range(LOGIN_ACCOUNT_CLIENT.limit):
            assert login(api, "owner@example.com", ip=attacker).status_code == 401
        assert login(api, "owner@example.com", ip=attacker).status_code == 429  # that address is done
        assert login(api, "owner@example.com", DEFAULT_PASSWORD, ip=attacker).status_code == 429

        for _ in range(3):  # still refused later in the window; never counted against the account
            assert login(api, "owner@example.com", ip=attacker).status_code == 429
        assert login(api, "owner@example.com", DEFAULT_PASSWORD, ip="203.0.113.10").status_code == 200


def test_the_owner_is_not_locked_out_by_wrong_guesses_under_another_spelling(api):
    UserFactory(email="owner2@example.com")
    with one_window(login_window(LOGIN_ACCOUNT)):  # else a new window could give the allowance back
        for _ in range(LOGIN_ACCOUNT_CLIENT.limit + 5):
            login(api, "OWNER2@example.com", ip="198.51.100.77")

        assert login(api, "owner2@example.com", DEFAULT_PASSWORD, ip="203.0.113.11").status_code == 200
    assert User.objects.filter(email="owner2@example.com").count() == 1


def test_a_user_saved_any_other_way_is_keyed_by_the_one_spelling(api):
    user = User(email="  Mixed.Case@Example.COM ")
    user.set_password(DEFAULT_PASSWORD)
    user.save()

    assert User.objects.get(pk=user.pk).email_key == "mixed.case@example.com"
    assert login(api, "mixed.case@example.com", DEFAULT_PASSWORD).status_code == 200


def test_the_migration_normalises_existing_emails_and_leaves_a_clash_alone(capsys):
    import importlib

    from django.apps import apps

    migration = importlib.import_module("accounts.migrations.0002_normalise_emails")
    plain, clash, owner = UserFactory(), UserFactory(), UserFactory(email="strasse@example.com")
    # Rows an older release stored (bypassing today's save()).
    User.objects.filter(pk=plain.pk).update(email="Old.User@Example.COM")
    User.objects.filter(pk=clash.pk).update(email="\u017ftrasse@example.com")

    migration.normalise(apps, None)

    emails = dict(User.objects.values_list("pk", "email"))
    assert emails[plain.pk] == "old.user@example.com"
    assert emails[clash.pk] == "\u017ftrasse@example.com"  # its normal form is another account's
    assert emails[owner.pk] == "strasse@example.com"
    assert str(clash.pk) in capsys.readouterr().out
