from __future__ import annotations

from io import StringIO

import pytest
from django.core.management import CommandError, call_command

from accounts.models import User
from tests.conftest import client_with_token
from tests.support.credits import credits_of
from tests.support.probe_urls import PROBE

pytestmark = [pytest.mark.django_db, pytest.mark.urls("tests.support.probe_urls")]


def test_create_user_and_api_key():
    created = StringIO()
    call_command(
        "create_user", "Ops@Example.com", "--password", "correct horse battery", "--credits", "7", stdout=created
    )
    out = StringIO()
    call_command("create_api_key", "ops@example.com", "--name", "deploy", stdout=out)

    user = User.objects.get_by_natural_key("ops@example.com")
    assert (user.is_staff, user.is_superuser, credits_of(user), user.email_verified) == (False, False, 7, True)
    # The starting balance is a grant in the ledger (assistant's), as every change of a balance is.
    assert list(user.credit_transactions.values_list("kind", "delta", "balance_after")) == [("grant", 7, 7)]
    assert created.getvalue() == f"Created user (not staff) Ops@Example.com ({user.id}).\n"
    raw = out.getvalue().strip().splitlines()[-1]
    assert client_with_token(raw).get(PROBE).status_code == 200


def test_create_user_staff_is_not_a_superuser():
    out = StringIO()
    call_command("create_user", "staff@example.com", "--password", "correct horse battery", "--staff", stdout=out)

    user = User.objects.get(email="staff@example.com")
    assert (user.is_staff, user.is_superuser) == (True, False)
    assert not user.get_all_permissions()
    assert out.getvalue() == (
        f"Created staff user (not a superuser; no admin permissions until given some) staff@example.com ({user.id}).\n"
    )


@pytest.mark.parametrize("flags", [["--superuser"], ["--superuser", "--staff"]])
def test_create_user_superuser_is_staff_too(flags):
    out = StringIO()
    call_command("create_user", "root@example.com", "--password", "correct horse battery", *flags, stdout=out)

    user = User.objects.get(email="root@example.com")
    assert (user.is_staff, user.is_superuser) == (True, True)
    assert out.getvalue() == f"Created superuser (staff, every permission) root@example.com ({user.id}).\n"


def test_create_user_refuses_a_duplicate_and_a_weak_password(alice):
    with pytest.raises(CommandError, match="already exists"):
        call_command("create_user", "alice@example.com", "--password", "correct horse battery")
    with pytest.raises(CommandError, match="Password refused"):
        call_command("create_user", "new@example.com", "--password", "123")


def test_create_api_key_for_unknown_user():
    with pytest.raises(CommandError, match="No user"):
        call_command("create_api_key", "ghost@example.com")


def test_create_api_key_refuses_an_unverified_account(alice):
    User.objects.filter(pk=alice.pk).update(email_verified_at=None)

    with pytest.raises(CommandError, match="not verified"):
        call_command("create_api_key", "alice@example.com")
    assert not alice.api_keys.exists()


def test_operator_made_accounts_are_verified_and_mailed_nothing(mailoutbox, django_capture_on_commit_callbacks):
    with django_capture_on_commit_callbacks(execute=True):
        call_command("create_user", "ops@example.com", "--password", "correct horse battery", stdout=StringIO())
        call_command("ensure_demo_user", stdout=StringIO())

    assert all(user.email_verified for user in User.objects.all())
    assert mailoutbox == []


def test_ensure_demo_user_is_idempotent_and_keeps_one_live_key():
    first, second = StringIO(), StringIO()
    call_command("ensure_demo_user", stdout=first)
    call_command("ensure_demo_user", stdout=second)

    user = User.objects.get(email="demo@example.com")
    assert user.api_keys.active().count() == 1
    new_key = second.getvalue().split("API key:")[1].strip()
    old_key = first.getvalue().split("API key:")[1].strip()
    assert client_with_token(new_key).get(PROBE).status_code == 200
    assert client_with_token(old_key).get(PROBE).status_code == 401
