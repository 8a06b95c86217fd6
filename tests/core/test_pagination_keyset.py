"""Keyset paging (core.api.pagination; docs/decisions.md#lists): `next_cursor` walks a list on its own order
to the same rows as `offset` does; a bad cursor, or one with an offset, is a 422."""

from __future__ import annotations

import pytest

from tasks_market.models import TaskStatus
from tests.tasks_market.factories import TaskFactory

pytestmark = pytest.mark.django_db


@pytest.fixture
def tasks(alice, bob):
    created = [TaskFactory(poster=alice if i % 3 else bob) for i in range(11)]
    TaskFactory(poster=alice, status=TaskStatus.CANCELLED)
    return created


def _walk(api, query: str) -> tuple[list[str], list[dict]]:
    ids, bodies, url = [], [], f"/api/v1/tasks?{query}"
    while True:
        body = api.get(url).json()
        bodies.append(body)
        ids += [item["id"] for item in body["items"]]
        if not body["next_cursor"]:
            return ids, bodies
        url = f"/api/v1/tasks?{query}&cursor={body['next_cursor']}"


@pytest.mark.parametrize("query", ["scope=open", "scope=mine", "scope=mine&status=open", "scope=open&status=open"])
def test_cursor_pages_are_the_offset_pages(alice_api, tasks, query):
    everything = alice_api.get(f"/api/v1/tasks?{query}&limit=100").json()

    ids, bodies = _walk(alice_api, f"{query}&limit=4")

    assert ids == [item["id"] for item in everything["items"]]
    assert all(body["total"] == everything["total"] for body in bodies)
    assert [body["has_more"] for body in bodies] == [True] * (len(bodies) - 1) + [False]
    assert everything["next_cursor"] is None
    offset_page = alice_api.get(f"/api/v1/tasks?{query}&limit=4&offset=4").json()
    assert offset_page["items"] == bodies[1]["items"]


def test_a_row_added_between_pages_does_not_shift_the_next_one(alice_api, bob, tasks):
    first = alice_api.get("/api/v1/tasks?scope=open&limit=3").json()
    TaskFactory(poster=bob)  # newest: before the cursor

    second = alice_api.get(f"/api/v1/tasks?scope=open&limit=3&cursor={first['next_cursor']}").json()

    expected = alice_api.get("/api/v1/tasks?scope=open&limit=3&offset=4").json()
    assert second["items"] == expected["items"] and second["total"] == first["total"] + 1


@pytest.mark.parametrize("cursor", ["x", "%%%", "WyJhIl0", "WyJub3QgYSBkYXRlIiwibm90IGEgdXVpZCJd", "bnVsbA"])
def test_a_bad_cursor_is_a_422(alice_api, tasks, cursor):
    response = alice_api.get(f"/api/v1/tasks?scope=open&cursor={cursor}")

    assert response.status_code == 422
    assert response.json()["detail"][0]["loc"] == ["query", "cursor"]


def test_a_cursor_with_an_offset_is_a_422(alice_api, tasks):
    cursor = alice_api.get("/api/v1/tasks?scope=open&limit=2").json()["next_cursor"]

    response = alice_api.get(f"/api/v1/tasks?scope=open&cursor={cursor}&offset=2")

    assert response.status_code == 422
    assert response.json()["detail"][0]["loc"] == ["query", "offset"]
    assert alice_api.get(f"/api/v1/tasks?scope=open&cursor={cursor}&offset=0").status_code == 200


def test_a_list_of_model_rows_walks_by_cursor_too(alice_api, alice):
    """`keyset_page` on a queryset of instances (the agents list), as every other enveloped list."""
    from tests.tasks_market.factories import AgentFactory

    for _ in range(5):
        AgentFactory(owner=alice)
    everything = alice_api.get("/api/v1/agents?limit=100").json()

    ids, url = [], "/api/v1/agents?limit=2"
    while url:
        body = alice_api.get(url).json()
        ids += [item["id"] for item in body["items"]]
        assert body["total"] == 5
        url = f"/api/v1/agents?limit=2&cursor={body['next_cursor']}" if body["next_cursor"] else None

    assert ids == [item["id"] for item in everything["items"]]
