"""The per-caller lists read their `total` from grouped kept counts (tasks_market.counters;
docs/decisions.md#lists): a poster's own tasks (`scope=mine`, with and without `status`), a task's bids as
its poster sees them, a user's agents and API keys, a seller's earnings and payouts (payments.counters) and a
subscription's deliveries (webhooks_app.counters). After each kind of write the total is the true count, and no
query COUNTs the rows."""

from __future__ import annotations

import pytest
from django.db import connection, transaction
from django.test.utils import CaptureQueriesContext

from accounts.models import ApiKey
from payments.models import Earning, EarningStatus, Payout
from tasks_market.models import Agent, Bid, Task, TaskStatus
from tests.core.test_grouped_counts import api_key, delivery, earning, payout, refused_delete
from tests.tasks_market.factories import AgentFactory, BidFactory, TaskFactory
from tests.webhooks_app.factories import WebhookSubscriptionFactory
from webhooks_app.models import WebhookDelivery, WebhookDeliveryStatus

pytestmark = pytest.mark.django_db


def _create(alice, bob, tasks):
    TaskFactory(poster=alice)
    BidFactory(task=tasks[0])
    AgentFactory(owner=alice)
    api_key(alice)
    earning(alice)
    payout(alice)
    delivery(_subscription(alice))


def _status_change(alice, bob, tasks):
    ApiKey.objects.filter(pk=ApiKey.objects.filter(user=alice).first().pk).update(revoked_at=tasks[0].created_at)
    Task.objects.filter(pk__in=[tasks[0].pk, tasks[1].pk]).update(status=TaskStatus.COMPLETED)
    # Every status of these is in its list: a status change moves no row out.
    Earning.objects.filter(owner=alice).update(status=EarningStatus.AVAILABLE)
    Payout.objects.filter(owner=alice).update(status=Payout.Status.FAILED)
    WebhookDelivery.objects.filter(subscription=_subscription(alice)).update(status=WebhookDeliveryStatus.FAILED)


def _move(alice, bob, tasks):  # rows that leave the list's key for another's
    Earning.objects.filter(pk=Earning.objects.filter(owner=alice).first().pk).update(owner=bob)
    Payout.objects.filter(pk=Payout.objects.filter(owner=alice).first().pk).update(owner=bob)
    elsewhere = WebhookSubscriptionFactory(owner=alice)
    WebhookDelivery.objects.filter(
        pk=WebhookDelivery.objects.filter(subscription=_subscription(alice)).first().pk
    ).update(subscription=elsewhere)


def _delete(alice, bob, tasks):
    tasks[1].delete()
    Bid.objects.filter(task=tasks[0]).first().delete()
    Agent.objects.filter(owner=alice).first().delete()
    ApiKey.objects.filter(user=alice).first().delete()
    WebhookDelivery.objects.filter(subscription=_subscription(alice)).first().delete()
    refused_delete(Earning.objects.filter(owner=alice))  # money rows stay (payments migration 0008)
    refused_delete(Payout.objects.filter(owner=alice))


def _rolled_back(alice, bob, tasks):
    with pytest.raises(RuntimeError), transaction.atomic():
        TaskFactory(poster=alice)
        BidFactory(task=tasks[0])
        earning(alice)
        payout(alice)
        delivery(_subscription(alice))
        raise RuntimeError


def _subscription(alice):
    """Alice's first subscription: the one whose deliveries are listed."""
    return alice.webhook_subscriptions.order_by("created_at", "id").first()


WRITES = [_create, _status_change, _move, _delete, _rolled_back]
LISTS = [
    # (url, the table it lists, the rows it lists); {subscription}: alice's first
    ("/api/v1/tasks?scope=mine", "tasks_market_task", lambda alice, task: Task.objects.filter(poster=alice)),
    (
        "/api/v1/tasks?scope=mine&status=open",
        "tasks_market_task",
        lambda alice, task: Task.objects.filter(poster=alice, status="open"),
    ),
    (
        "/api/v1/tasks?scope=mine&status=completed&limit=1",
        "tasks_market_task",
        lambda alice, task: Task.objects.filter(poster=alice, status="completed"),
    ),
    ("/api/v1/tasks/{task}/bids", "tasks_market_bid", lambda alice, task: Bid.objects.filter(task=task)),
    (
        "/api/v1/tasks/{task}/bids?sort=reputation",
        "tasks_market_bid",
        lambda alice, task: Bid.objects.filter(task=task),
    ),
    ("/api/v1/tasks/{task}/bids?limit=1", "tasks_market_bid", lambda alice, task: Bid.objects.filter(task=task)),
    ("/api/v1/agents?limit=1", "tasks_market_agent", lambda alice, task: Agent.objects.filter(owner=alice)),
    (
        "/api/v1/auth/api-keys?limit=1",
        "accounts_apikey",
        lambda alice, task: ApiKey.objects.active().filter(user=alice),
    ),
    ("/api/v1/payouts/earnings?limit=1", "payments_earning", lambda alice, task: Earning.objects.filter(owner=alice)),
    ("/api/v1/payouts?limit=1", "payments_payout", lambda alice, task: Payout.objects.filter(owner=alice)),
    (
        "/api/v1/webhooks/subscriptions/{subscription}/deliveries?limit=1",
        "webhooks_app_webhookdelivery",
        lambda alice, task: WebhookDelivery.objects.filter(subscription=_subscription(alice)),
    ),
    *(
        (
            f"/api/v1/webhooks/subscriptions/{{subscription}}/deliveries?limit=1&status={status}",
            "webhooks_app_webhookdelivery",
            lambda alice, task, status=status: WebhookDelivery.objects.filter(
                subscription=_subscription(alice), status=status
            ),
        )
        for status in (WebhookDeliveryStatus.PENDING, WebhookDeliveryStatus.FAILED)
    ),
]


@pytest.mark.parametrize("write", WRITES, ids=[write.__name__.strip("_") for write in WRITES])
def test_each_list_total_is_the_kept_count_and_no_count_is_run(alice_api, alice, bob, write):
    tasks = [TaskFactory(poster=alice) for _ in range(3)]
    TaskFactory(poster=bob)
    AgentFactory(owner=alice)
    AgentFactory(owner=alice)
    api_key(alice)
    api_key(alice)
    for _ in range(3):
        BidFactory(task=tasks[0])
    subscription = WebhookSubscriptionFactory(owner=alice)
    for _ in range(2):
        earning(alice)
        payout(alice)
        delivery(subscription)
    write(alice, bob, tasks)

    for template, table, rows in LISTS:
        url = template.format(task=tasks[0].pk, subscription=subscription.pk)
        with CaptureQueriesContext(connection) as queries:
            response = alice_api.get(url)
        assert response.status_code == 200, (url, response.content)
        body = response.json()
        assert body["total"] == rows(alice, tasks[0]).count(), url
        counts = [q["sql"] for q in queries if "COUNT(" in q["sql"].upper() and f'"{table}"' in q["sql"]]
        assert counts == [], url
        if body["next_cursor"]:  # the page after the cursor carries the same total, kept too
            with CaptureQueriesContext(connection) as queries:
                after = alice_api.get(f"{url}{'&' if '?' in url else '?'}cursor={body['next_cursor']}").json()
            assert after["total"] == body["total"], url
            assert not [q for q in queries if "COUNT(" in q["sql"].upper() and f'"{table}"' in q["sql"]], url


def test_a_bidder_sees_the_count_of_their_own_bids(alice, bob):
    from tests.conftest import client_with_token, jwt_for

    task = TaskFactory(poster=alice)
    BidFactory(task=task)
    BidFactory(task=task, agent__owner=bob)

    body = client_with_token(jwt_for(bob)).get(f"/api/v1/tasks/{task.pk}/bids").json()

    assert body["total"] == 1
    assert len(body["items"]) == 1


def test_a_subscriptions_deliveries_of_each_status_are_kept_too(alice_api, alice):
    """A `status` reads that status's key; none the sum of them. `status` is the filter's only field, so
    no filter narrows the deliveries below a kept key."""
    from webhooks_app.filters import DeliveryFilter

    subscription = WebhookSubscriptionFactory(owner=alice)
    deliveries = [delivery(subscription) for _ in range(3)]
    WebhookDelivery.objects.filter(pk=deliveries[0].pk).update(status=WebhookDeliveryStatus.SUCCEEDED)
    url = f"/api/v1/webhooks/subscriptions/{subscription.pk}/deliveries"

    with CaptureQueriesContext(connection) as queries:
        totals = {status: alice_api.get(f"{url}?status={status}").json()["total"] for status in WebhookDeliveryStatus}

    assert totals == {"pending": 2, "sending": 0, "succeeded": 1, "failed": 0}
    assert alice_api.get(url).json()["total"] == 3
    assert not [q for q in queries if "COUNT(" in q["sql"].upper() and "webhooks_app_webhookdelivery" in q["sql"]]
    assert list(DeliveryFilter.base_filters) == ["status"]
