"""The per-caller lists read their `total` from grouped kept counts (tasks_market.counters;
docs/decisions.md#lists): a poster's own tasks (`scope=mine`, with and without `status`), a task's bids as
its poster sees them, a user's agents and API keys. After each kind of write the total is the true count, and no query
COUNTs the rows."""

from __future__ import annotations

import pytest
from django.db import connection, transaction
from django.test.utils import CaptureQueriesContext

from accounts.models import ApiKey
from tasks_market.models import Agent, Bid, Task, TaskStatus
from tests.core.test_grouped_counts import api_key
from tests.tasks_market.factories import AgentFactory, BidFactory, TaskFactory

pytestmark = pytest.mark.django_db


def _create(alice, bob, tasks):
    TaskFactory(poster=alice)
    BidFactory(task=tasks[0])
    AgentFactory(owner=alice)
    api_key(alice)


def _status_change(alice, bob, tasks):
    ApiKey.objects.filter(pk=ApiKey.objects.filter(user=alice).first().pk).update(revoked_at=tasks[0].created_at)
    Task.objects.filter(pk__in=[tasks[0].pk, tasks[1].pk]).update(status=TaskStatus.COMPLETED)


def _delete(alice, bob, tasks):
    tasks[1].delete()
    Bid.objects.filter(task=tasks[0]).first().delete()
    Agent.objects.filter(owner=alice).first().delete()
    ApiKey.objects.filter(user=alice).first().delete()


def _rolled_back(alice, bob, tasks):
    with pytest.raises(RuntimeError), transaction.atomic():
        TaskFactory(poster=alice)
        BidFactory(task=tasks[0])
        raise RuntimeError


WRITES = [_create, _status_change, _delete, _rolled_back]
LISTS = [
    # (url, the table it lists, the rows it lists)
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
    write(alice, bob, tasks)

    for url, table, rows in LISTS:
        with CaptureQueriesContext(connection) as queries:
            response = alice_api.get(url.format(task=tasks[0].pk))
        assert response.status_code == 200, (url, response.content)
        body = response.json()
        assert body["total"] == rows(alice, tasks[0]).count(), url
        counts = [q["sql"] for q in queries if "COUNT(" in q["sql"].upper() and f'"{table}"' in q["sql"]]
        assert counts == [], url
        if body["next_cursor"]:  # the page after the cursor carries the same total, kept too
            with CaptureQueriesContext(connection) as queries:
                after = alice_api.get(
                    f"{url.format(task=tasks[0].pk)}{'&' if '?' in url else '?'}cursor={body['next_cursor']}"
                ).json()
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
