"""Every bid carries its agent's record (`agent_reputation`), from the agent's row joined in the bids query,
and the bids list sorts by `reputation`, `amount` or `eta` (docs/decisions.md#agent-reputation)."""

from __future__ import annotations

from decimal import Decimal

import pytest

from tasks_market.api.serializers.reputation import ReputationSummarySerializer
from tasks_market.models import Agent, AgentReputation
from tasks_market.services.reputation import reputation_summary
from tests.tasks_market.factories import AgentFactory, BidFactory, TaskFactory
from tests.tasks_market.test_query_counts import queries

pytestmark = pytest.mark.django_db

# name: (score, completed tasks or None for no record, amount, eta_hours), made oldest first.
AGENTS = {
    "unrated": (None, None, "120.00", 48),
    "steady": ("4.2000", 12, "150.00", 24),
    "new_star": ("3.9286", 1, "100.00", 72),
    "tied_more": ("4.2000", 30, "180.00", 12),
}


@pytest.fixture
def bids(alice):
    task = TaskFactory(poster=alice)
    made = {}
    for name, (score, completed, amount, eta) in AGENTS.items():
        agent = AgentFactory(name=name)
        if score is not None:
            AgentReputation.objects.create(agent=agent, score=Decimal(score), completed_tasks=completed, rating_count=3)
        made[name] = BidFactory(task=task, agent=agent, amount=Decimal(amount), eta_hours=eta)
    return task


def names(response) -> list[str]:
    assert response.status_code == 200, response.content
    return [bid["agent_name"] for bid in response.json()["items"]]


@pytest.mark.parametrize(
    ("sort", "expected"),
    [
        ("", ["tied_more", "new_star", "steady", "unrated"]),  # default: newest first, unchanged
        ("reputation", ["tied_more", "steady", "new_star", "unrated"]),  # ties by completed tasks
        ("amount", ["new_star", "unrated", "steady", "tied_more"]),
        ("eta", ["tied_more", "steady", "unrated", "new_star"]),
    ],
)
def test_the_bids_sort(alice_api, bids, sort, expected):
    query = f"?sort={sort}" if sort else ""
    assert names(alice_api.get(f"/api/v1/tasks/{bids.id}/bids{query}")) == expected


def test_each_bid_carries_its_agents_record(alice_api, bids):
    items = {
        b["agent_name"]: b["agent_reputation"] for b in alice_api.get(f"/api/v1/tasks/{bids.id}/bids").json()["items"]
    }

    assert items["steady"] == {
        "score": 4.2,
        "rating_count": 3,
        "completed_tasks": 12,
        "approved_without_revision": 0,
        "on_time": 0,
        "disputes": 0,
    }
    assert items["unrated"] == {
        "score": 3.5,
        "rating_count": 0,
        "completed_tasks": 0,
        "approved_without_revision": 0,
        "on_time": 0,
        "disputes": 0,
    }


def test_a_bids_record_is_the_summary_serializers(alice_api, bids):
    """The field renders by hand (a serializer per bid cost more than the page's query): the schema's serializer
    must say the same of every bid, rated or not."""
    for item in alice_api.get(f"/api/v1/tasks/{bids.id}/bids").json()["items"]:
        agent = Agent.objects.select_related("reputation").get(pk=item["agent_id"])
        expected = ReputationSummarySerializer(reputation_summary(getattr(agent, "reputation", None))).data
        assert item["agent_reputation"] == expected
        assert [type(v) for v in item["agent_reputation"].values()] == [type(v) for v in expected.values()]


@pytest.mark.parametrize(
    ("query", "loc"),
    [("sort=price", ["query", "sort"]), ("sort=reputation&cursor=abc", ["query", "cursor"])],
)
def test_an_unknown_sort_or_a_cursor_on_the_reputation_order_is_422(alice_api, bids, query, loc):
    response = alice_api.get(f"/api/v1/tasks/{bids.id}/bids?{query}")

    assert response.status_code == 422, response.content
    assert response.json()["detail"][0]["loc"] == loc


def test_pages_of_each_order(alice_api, bids):
    first = alice_api.get(f"/api/v1/tasks/{bids.id}/bids?sort=amount&limit=2").json()
    after = alice_api.get(f"/api/v1/tasks/{bids.id}/bids?sort=amount&limit=2&cursor={first['next_cursor']}")
    by_reputation = alice_api.get(f"/api/v1/tasks/{bids.id}/bids?sort=reputation&limit=2&offset=2").json()

    assert names(after) == ["steady", "tied_more"]
    assert ([b["agent_name"] for b in by_reputation["items"]], by_reputation["next_cursor"]) == (
        ["new_star", "unrated"],
        None,
    )


@pytest.mark.parametrize("sort", ["", "reputation", "amount", "eta"])
def test_the_record_costs_no_query_per_bid(alice_api, alice, sort):
    task = TaskFactory(poster=alice)

    def build():
        agent = AgentFactory()
        AgentReputation.objects.create(agent=agent, score=Decimal("4.1"), completed_tasks=2)
        BidFactory(task=task, agent=agent)

    path = f"/api/v1/tasks/{task.id}/bids?limit=100{'&sort=' + sort if sort else ''}"
    build()
    one = queries(alice_api, path)
    for _ in range(24):
        build()
    BidFactory(task=task)  # an agent with no record yet

    assert queries(alice_api, path) == one
