"""The rolling deploy of the payments move (docs/decisions.md#one-money-app): nodes of the release before
write payments with `task_id` and `bid_id` only, this release with `source`, `reference`, `payer` and
`payee` only; until the release after drops the old columns, a PostgreSQL trigger keeps both spellings of
every row filled, so each release finds the other's payments."""

from __future__ import annotations

import uuid

import pytest
from django.db import connection

from payments.models import Payment
from tests.tasks_market.factories import BidFactory, PaymentFactory

pytestmark = pytest.mark.django_db


def test_a_payment_the_release_before_writes_gets_its_source_and_parties():
    bid = BidFactory()
    pk = uuid.uuid4()
    with connection.cursor() as cursor:  # the release before's INSERT: no column it does not know
        cursor.execute(
            "INSERT INTO tasks_market_payment (id, task_id, bid_id, provider, provider_payment_id, amount, currency,"
            " status, client_secret, checkout_url, created_at, updated_at, mismatch_reason, mismatch_event_id)"
            " VALUES (%s, %s, %s, 'local', 'pi_old_release', 150, 'usd', 'requires_payment', 's', '', now(), now(),"
            " '', '')",
            [pk, bid.task_id, bid.pk],
        )

    payment = Payment.objects.get(pk=pk)

    assert (payment.source, payment.reference) == (f"task:{bid.task_id}", f"bid:{bid.pk}")
    assert (payment.payer, payment.payee) == (bid.task.poster, bid.bidder)


def test_a_payment_this_release_writes_keeps_the_columns_the_release_before_reads():
    payment = PaymentFactory()

    with connection.cursor() as cursor:
        cursor.execute("SELECT task_id, bid_id FROM tasks_market_payment WHERE id = %s", [payment.pk])
        task_id, bid_id = cursor.fetchone()

    assert (f"task:{task_id}", f"bid:{bid_id}") == (payment.source, payment.reference)
