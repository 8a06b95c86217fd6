"""Money rows are never deleted (docs/decisions.md#money-rows-are-never-deleted): the admin offers no delete,
a poster's or a task's delete cannot take its payments along, and the database refuses a DELETE."""

from __future__ import annotations

import pytest
from django.db import DatabaseError, IntegrityError, connection, transaction
from django.db.models import ProtectedError
from django.test import Client

from payments.ledger import ledger_post
from payments.models import Chargeback, Earning, Payment, Payout, PayoutAccount
from tasks_market.models import DisputeResolution, Task
from tests.support.admin import actions_of
from tests.support.factories import UserFactory
from tests.tasks_market.factories import delivering_task

pytestmark = pytest.mark.django_db

MONEY_PAGES = [
    "tasks_market/task",
    "tasks_market/bid",
    "payments/payment",
    "tasks_market/delivery",
    "tasks_market/disputeresolution",
    "payments/earning",
    "payments/payout",
    "payments/payoutaccount",
    "payments/chargeback",
    "payments/ledgerentry",
    "payments/ledgerline",
]


@pytest.mark.parametrize("page", MONEY_PAGES)
def test_the_admin_offers_no_delete_of_money_rows_even_to_a_superuser(admin_client, page):
    task, _ = delivering_task()
    payment = Payment.objects.get(source=f"task:{task.pk}")

    listing = admin_client.get(f"/admin/{page}/", secure=True)

    assert listing.status_code == 200, page
    assert "delete_selected" not in actions_of(listing)
    if page == "payments/payment":
        delete = admin_client.post(f"/admin/{page}/{payment.pk}/delete/", {"post": "yes"}, secure=True)
        assert delete.status_code == 403
        assert Payment.objects.filter(pk=payment.pk).exists()


def test_deleting_a_poster_or_a_task_does_not_take_its_payments():
    task, _ = delivering_task()

    with pytest.raises(ProtectedError), transaction.atomic():
        task.poster.delete()
    with pytest.raises(ProtectedError), transaction.atomic():
        Task.objects.filter(pk=task.pk).delete()

    assert Payment.objects.filter(source=f"task:{task.pk}").exists()


@pytest.mark.parametrize("table", ["tasks_market_payment", "tasks_market_disputeresolution"])
def test_the_database_refuses_a_delete_of_money_rows(table):
    task, _ = delivering_task(delivery_status="disputed")
    payment = Payment.objects.get(source=f"task:{task.pk}")
    resolution = DisputeResolution.objects.create(task=task, outcome="refund_full", currency="usd")
    pk = payment.pk if table == "tasks_market_payment" else resolution.pk

    with pytest.raises((IntegrityError, DatabaseError)) as refused, transaction.atomic(), connection.cursor() as cur:
        cur.execute(f"DELETE FROM {table} WHERE id = %s", [pk])

    assert "never deleted" in str(refused.value)
    assert Payment.objects.filter(pk=payment.pk).exists()
    assert DisputeResolution.objects.filter(pk=resolution.pk).exists()


def test_staff_without_a_superuser_cannot_delete_a_task_with_delete_permission():
    task, _ = delivering_task()
    deleter = UserFactory(
        is_staff=True, permissions=["tasks_market.view_task", "tasks_market.delete_task", "payments.delete_payment"]
    )
    client = Client()
    client.force_login(deleter)

    page = client.get(f"/admin/tasks_market/task/{task.pk}/delete/", secure=True)

    assert page.status_code == 403
    assert Task.objects.filter(pk=task.pk).exists()


PAYMENTS_TABLES = [
    "payments_payoutaccount",
    "payments_earning",
    "payments_payout",
    "payments_chargeback",
    "payments_ledgerentry",
    "payments_ledgerline",
]


@pytest.mark.parametrize("table", PAYMENTS_TABLES)
def test_the_database_refuses_a_delete_of_sellers_money_rows(table):
    """Even a DELETE with no WHERE: the trigger refuses each row (a table with no rows has nothing to refuse,
    so each test first makes the rows a released, paid-out task leaves)."""
    seller = UserFactory()
    account = PayoutAccount.objects.create(owner=seller, provider="local", provider_account_id="acct_kept")
    payout = Payout.objects.create(owner=seller, account=account, amount=1, currency="usd", idempotency_key="po-k")
    Earning.objects.create(
        owner=seller, source="task:kept", payment_ref="pi_kept", provider="local", currency="usd", gross=1, fee=0,
        amount=1, available_after="2026-01-01T00:00:00Z", payout=payout,
    )  # fmt: skip
    Chargeback.objects.create(id="dp_kept", payment_ref="pi_kept")
    ledger_post(kind="test", source="task:kept", key="kept", currency="usd", lines=[("a", 1), ("b", -1)])

    with pytest.raises((IntegrityError, DatabaseError)) as refused, transaction.atomic(), connection.cursor() as cur:
        cur.execute(f"DELETE FROM {table}")

    assert "never deleted" in str(refused.value)
    with connection.cursor() as cur:
        cur.execute(f"SELECT count(*) FROM {table}")
        assert cur.fetchone()[0] >= 1
