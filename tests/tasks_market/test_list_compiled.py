"""The task list runs its page and total as one query compiled once per process (core.db.precompiled): every
page, filter and scope answers exactly as the ORM's two queries (`core.api.pagination.page`) do."""

from __future__ import annotations

import pytest
from django.db import connection
from django.test.utils import CaptureQueriesContext

from core.api.pagination import page
from tasks_market import selectors
from tasks_market.api.serializers import TASK_COLUMNS, task_item
from tasks_market.models import TaskStatus
from tests.tasks_market.factories import TaskFactory

pytestmark = pytest.mark.django_db


@pytest.fixture
def tasks(alice, bob):
    for i in range(7):
        TaskFactory(poster=alice if i % 2 else bob)
    TaskFactory(poster=alice, status=TaskStatus.CANCELLED)
    TaskFactory(poster=bob, status=TaskStatus.CANCELLED)


@pytest.mark.parametrize("scope", ["open", "mine"])
@pytest.mark.parametrize("status", [None, "open", "cancelled", "completed"])
@pytest.mark.parametrize(("limit", "offset"), [(20, 0), (3, 0), (3, 2), (3, 6), (5, 50)])
def test_every_page_is_what_the_orm_answers(alice_api, alice, tasks, scope, status, limit, offset):
    rows, total, has_more = page(
        selectors.tasks_list(alice, scope=scope, status=status).values(*TASK_COLUMNS), limit=limit, offset=offset
    )
    query = f"scope={scope}&limit={limit}&offset={offset}" + (f"&status={status}" if status else "")

    body = alice_api.get(f"/api/v1/tasks?{query}").json()

    body.pop("next_cursor")  # keyset paging, pinned in tests/core/test_pagination_keyset.py
    assert body == {
        "items": [task_item(row, alice.pk) for row in rows],
        "total": total,
        "has_more": has_more,
        "total_exact": True,
    }


def test_a_page_and_its_total_are_one_query_and_a_page_past_the_end_still_counts(alice_api, tasks):
    alice_api.get("/api/v1/tasks?scope=open")  # per-process caches warm (rate-limit overrides)
    with CaptureQueriesContext(connection) as in_range:
        first = alice_api.get("/api/v1/tasks?scope=open&limit=2").json()
    with CaptureQueriesContext(connection) as past_end:
        beyond = alice_api.get("/api/v1/tasks?scope=open&offset=100").json()

    assert (first["total"], first["has_more"], len(first["items"])) == (7, True, 2)
    assert (beyond["total"], beyond["has_more"], beyond["items"]) == (7, False, [])
    # The user row, then the page with its total; past the end the page is empty, so a COUNT follows.
    assert len(past_end) == len(in_range) + 1


def test_a_new_task_is_listed_at_once(alice_api, bob, tasks):
    before = alice_api.get("/api/v1/tasks?scope=open").json()
    task = TaskFactory(poster=bob)

    after = alice_api.get("/api/v1/tasks?scope=open").json()

    assert after["total"] == before["total"] + 1 and after["items"][0]["id"] == str(task.id)
