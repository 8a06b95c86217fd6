"""Each growing list reads its page through an index on its own order (docs/decisions.md#lists): on a
populated table, neither the first page nor a cursor page scans the table or sorts."""

from __future__ import annotations

import re

import pytest
from django.db import connection
from django.test.utils import CaptureQueriesContext

from tests.tasks_market.factories import AgentFactory, BidFactory, TaskFactory

pytestmark = pytest.mark.django_db

ROWS = 5000


def _copy_rows(table: str, where: str, count: int, **overrides: str) -> None:
    """`count` copies of one row, older, as the bench adds them (bench/run.py), then ANALYZE."""
    with connection.cursor() as cursor:
        cursor.execute(f"SELECT * FROM {table} LIMIT 0")
        columns = [column.name for column in cursor.description]
        fresh = {"id": "gen_random_uuid()", "created_at": "t.created_at - g * interval '1 second'", **overrides}
        select = ", ".join(fresh.get(c, f"t.{c}") for c in columns)
        cursor.execute(
            f"INSERT INTO {table} ({', '.join(columns)}) SELECT {select} FROM generate_series(1, %s) g, "
            f"(SELECT * FROM {table} WHERE {where} LIMIT 1) t",
            [count],
        )
        cursor.execute(f"ANALYZE {table}")


def _plans(api, url: str, table: str) -> list[str]:
    """The plan of the list's query of `table`, for the first page and for the page after its cursor."""
    plans = []
    for page in (1, 2):
        with CaptureQueriesContext(connection) as queries:
            body = api.get(url).json()
        assert body["items"] and body["next_cursor"], body
        sql = [q["sql"] for q in queries.captured_queries if f'FROM "{table}"' in q["sql"] and "LIMIT" in q["sql"]][-1]
        with connection.cursor() as cursor:
            cursor.execute(f"EXPLAIN {sql}")
            plans.append("\n".join(row[0] for row in cursor.fetchall()))
        url = f"{url}&cursor={body['next_cursor']}" if page == 1 else url
    return plans


def _assert_index_only_order(plans: list[str], table: str) -> None:
    for plan in plans:
        assert not re.search(rf"Seq Scan on {table}\b", plan), plan  # not tasks_market_bidjudgement's
        assert "Sort" not in plan, plan
        assert "Index Scan using" in plan or "Index Only Scan" in plan, plan


@pytest.mark.parametrize("scope", ["open", "mine", "mine&status=open"])
def test_task_lists(alice_api, alice, bob, scope):
    TaskFactory(poster=bob)
    TaskFactory(poster=alice)
    _copy_rows("tasks_market_task", f"poster_id = '{bob.pk}'", ROWS)
    _copy_rows("tasks_market_task", f"poster_id = '{alice.pk}'", ROWS // 10)

    plans = _plans(alice_api, f"/api/v1/tasks?scope={scope}&limit=5", "tasks_market_task")

    _assert_index_only_order(plans, "tasks_market_task")


def test_bids_of_a_task(alice_api, alice, bob):
    task, other = TaskFactory(poster=alice), TaskFactory(poster=bob)
    BidFactory(task=task)
    BidFactory(task=other)
    _copy_rows("tasks_market_bid", f"task_id = '{other.pk}'", ROWS, status="'rejected'")  # the marketplace's bids
    _copy_rows("tasks_market_bid", f"task_id = '{task.pk}'", ROWS // 10, status="'rejected'")  # this task's

    plans = _plans(alice_api, f"/api/v1/tasks/{task.pk}/bids?limit=5", "tasks_market_bid")

    _assert_index_only_order(plans, "tasks_market_bid")


def test_agents_of_a_user(alice_api, alice):
    AgentFactory(owner=alice)
    _copy_rows("tasks_market_agent", "true", ROWS)

    plans = _plans(alice_api, "/api/v1/agents?limit=5", "tasks_market_agent")

    _assert_index_only_order(plans, "tasks_market_agent")


def test_webhook_subscriptions_and_their_deliveries(alice_api, alice):
    from tests.webhooks_app.factories import WebhookSubscriptionFactory
    from webhooks_app.models import WebhookDelivery, WebhookEvent

    subscription = WebhookSubscriptionFactory(owner=alice)
    event = WebhookEvent.objects.create(owner=alice, type="task.created", body="{}")
    WebhookDelivery.objects.create(event=event, subscription=subscription, message_id="msg_0")
    _copy_rows("webhooks_app_webhooksubscription", "true", ROWS)
    _copy_rows("webhooks_app_webhookdelivery", "true", ROWS, message_id="gen_random_uuid()::text")

    subscriptions = _plans(alice_api, "/api/v1/webhooks/subscriptions?limit=5", "webhooks_app_webhooksubscription")
    deliveries = _plans(
        alice_api,
        f"/api/v1/webhooks/subscriptions/{subscription.pk}/deliveries?limit=5",
        "webhooks_app_webhookdelivery",
    )

    _assert_index_only_order(subscriptions, "webhooks_app_webhooksubscription")
    _assert_index_only_order(deliveries, "webhooks_app_webhookdelivery")


def test_the_credit_ledger(alice_api, alice):
    from assistant.models import CreditTransaction

    CreditTransaction.objects.create(user=alice, delta=10, kind="grant", reason="welcome", balance_after=10)
    _copy_rows("assistant_credittransaction", "true", ROWS)

    plans = _plans(alice_api, "/api/v1/allmodelchat/credits/transactions?limit=5", "assistant_credittransaction")

    _assert_index_only_order(plans, "assistant_credittransaction")


@pytest.mark.parametrize("kind", ["earnings", "payouts"])
def test_a_sellers_earnings_and_payouts(alice_api, alice, bob, kind):
    from tests.core.test_grouped_counts import earning, payout

    for seller in (alice, bob):
        (earning if kind == "earnings" else payout)(seller)
    table, unique = ("payments_earning", "source") if kind == "earnings" else ("payments_payout", "idempotency_key")
    _copy_rows(table, f"owner_id = '{bob.pk}'", ROWS, **{unique: "gen_random_uuid()::text"})  # other sellers'
    _copy_rows(table, f"owner_id = '{alice.pk}'", ROWS // 10, **{unique: "gen_random_uuid()::text"})

    plans = _plans(alice_api, f"/api/v1/payouts{'/earnings' if kind == 'earnings' else ''}?limit=5", table)

    _assert_index_only_order(plans, table)
