"""The rolling deploy of the credits move (docs/decisions.md#credits-belong-to-the-assistant): nodes of the
release before read and write `accounts_user.credits`, this release the balance row of
`assistant_creditbalance`; until the release after drops the column, PostgreSQL triggers keep the two equal,
whichever release wrote."""

from __future__ import annotations

import uuid

import pytest
from django.db import connection

from assistant.services.credits import credit_apply, credits_adjust
from tests.support.credits import credits_of
from tests.support.factories import UserFactory

pytestmark = pytest.mark.django_db


def column(user) -> int:
    with connection.cursor() as cursor:
        cursor.execute("SELECT credits FROM accounts_user WHERE id = %s", [user.pk])
        return cursor.fetchone()[0]


def test_a_debit_on_a_node_of_the_release_before_moves_the_balance():
    user = UserFactory(credits=10)
    assert column(user) == 10  # this release's write reached the column the release before reads

    with connection.cursor() as cursor:  # the release before's conditional debit
        cursor.execute("UPDATE accounts_user SET credits = credits - 3 WHERE id = %s AND credits >= 3", [user.pk])

    assert credits_of(user) == 7


def test_an_account_the_release_before_makes_with_credits_has_its_balance():
    pk = uuid.uuid4()
    with connection.cursor() as cursor:  # its INSERT, with the column it knows
        cursor.execute(
            "INSERT INTO accounts_user (id, password, email, email_key, is_superuser, is_staff, is_active, credits,"
            " date_joined) VALUES (%s, '', 'old@example.com', 'old@example.com', false, false, true, 25, now())",
            [pk],
        )

    assert credits_of(UserFactory.build(pk=pk)) == 25


def test_this_release_writes_accounts_without_the_column_and_its_debits_reach_it():
    user = UserFactory()
    assert column(user) == 0  # the database default: this release's INSERT leaves the column out

    credits_adjust(user=user, delta=5, reason="test")
    credit_apply(user_id=user.pk, delta=-2, kind="image_generation", reason="an image")

    assert (column(user), credits_of(user)) == (3, 3)
