"""The open-task search (docs/decisions.md#task-search): every filter and sort against hand-computed answers,
every bad value a 422 that names it, cursors through every order, kept totals and the text search's cap.
The same cases run on SQLite in tests/tasks_market/test_counts_open_tasks.py."""

from __future__ import annotations

import pytest
from django.db import connection
from django.test.utils import CaptureQueriesContext

from core.db import counters
from tasks_market.counters import open_in_category
from tasks_market.models import Task, TaskStatus
from tasks_market.selectors import task_search
from tests.tasks_market import search_cases
from tests.tasks_market.search_cases import CASES, day
from tests.test_list_indexes import _copy_rows

pytestmark = pytest.mark.django_db


@pytest.fixture
def made(alice):
    return search_cases.create(alice)


def _walk(api, url: str) -> tuple[list, list[dict]]:
    """Every page of `url` by `next_cursor`: the ids in order, and each page's body."""
    ids, bodies, cursor = [], [], None
    while True:
        response = api.get(url + (f"&cursor={cursor}" if cursor else ""))
        assert response.status_code == 200, response.content
        body = response.json()
        bodies.append(body)
        ids += [item["id"] for item in body["items"]]
        cursor = body["next_cursor"]
        if not cursor:
            return ids, bodies


@pytest.mark.parametrize(("query", "expected"), CASES, ids=[query for query, _ in CASES])
def test_each_filter_and_sort_answers_the_hand_computed_tasks(alice_api, made, query, expected):
    body = alice_api.get(f"/api/v1/tasks?{query}&limit=100").json()

    assert search_cases.numbers([item["id"] for item in body["items"]], made) == expected
    assert (body["total"], body["has_more"], body["total_exact"], body["next_cursor"]) == (
        len(expected),
        False,
        True,
        None,
    )


@pytest.mark.parametrize(
    "query",
    [
        "scope=open&category=research&category=data",
        "scope=open&min_budget=100",
        "scope=open&sort=budget",
        "scope=open&sort=deadline",
        "scope=open&q=research",
        "scope=open&q=survey&sort=relevance",
        "scope=mine&currency=usd&sort=deadline",
    ],
)
def test_cursors_walk_every_order_to_the_same_answer_as_one_page(alice_api, made, query):
    whole = [item["id"] for item in alice_api.get(f"/api/v1/tasks?{query}&limit=100").json()["items"]]

    walked, bodies = _walk(alice_api, f"/api/v1/tasks?{query}&limit=2")

    assert walked == whole
    assert {body["total"] for body in bodies} == {len(whole)}


def test_agents_and_posters_see_the_same_search(alice_api, bob_api, made):
    query = "/api/v1/tasks?scope=open&category=research&min_budget=90&sort=budget"
    theirs, ours = bob_api.get(query).json(), alice_api.get(query).json()

    assert [i["id"] for i in theirs["items"]] == [i["id"] for i in ours["items"]]
    assert search_cases.numbers([i["id"] for i in ours["items"]], made) == [1, 2, 6]
    assert {i["is_mine"] for i in ours["items"]} == {True} and {i["is_mine"] for i in theirs["items"]} == {False}


def _problem(response) -> list:
    assert response.status_code == 422, response.content
    return [tuple(entry["loc"]) for entry in response.json()["detail"]]


@pytest.mark.parametrize(
    ("query", "loc"),
    [
        ("category=sales", ("query", "category")),
        ("category=research&category=sales", ("query", "category")),
        ("currency=xyz", ("query", "currency")),
        ("sort=cheapest", ("query", "sort")),
        ("sort=relevance", ("query", "sort")),
        ("min_budget=abc", ("query", "min_budget")),
        ("min_budget=1e3", ("query", "min_budget")),
        ("min_budget=-1", ("query", "min_budget")),
        ("min_budget=1.234", ("query", "min_budget")),
        ("max_budget=NaN", ("query", "max_budget")),
        ("max_budget=12345678901", ("query", "max_budget")),
        ("min_budget=100&max_budget=99.99", ("query", "max_budget")),
        ("deadline_after=tomorrow", ("query", "deadline_after")),
        ("deadline_before=2030-13-01T00:00:00Z", ("query", "deadline_before")),
        ("deadline_after=0001-01-01T00:00:00%2B10:00", ("query", "deadline_after")),  # before year 1 in UTC
        (f"deadline_after={day(10)}&deadline_before={day(5)}", ("query", "deadline_before")),
        ("q=" + "a" * 201, ("query", "q")),
        ("q=research&cursor=not-a-cursor", ("query", "cursor")),
        ("sort=budget&cursor=not-a-cursor", ("query", "cursor")),
    ],
)
def test_a_bad_value_is_a_422_that_names_it(alice_api, made, query, loc):
    assert loc in _problem(alice_api.get(f"/api/v1/tasks?scope=open&{query}"))


def test_bounds_are_read_as_utc_whatever_their_offset(alice_api, made):
    """An offset over 15:59 is valid ISO 8601 but not a PostgreSQL displacement: the bound is compared in UTC."""
    body = alice_api.get("/api/v1/tasks?scope=open&deadline_after=2030-01-11T04:00:00%2B16:00").json()

    assert search_cases.numbers([i["id"] for i in body["items"]], made) == [1, 4, 7]  # from 2030-01-10T12:00Z


def test_a_cursor_of_another_order_is_a_422(alice_api, made):
    by_budget = alice_api.get("/api/v1/tasks?scope=open&sort=budget&limit=1").json()["next_cursor"]
    by_text = alice_api.get("/api/v1/tasks?scope=open&q=research&limit=1").json()["next_cursor"]

    assert ("query", "cursor") in _problem(alice_api.get(f"/api/v1/tasks?scope=open&sort=deadline&cursor={by_budget}"))
    assert ("query", "cursor") in _problem(alice_api.get(f"/api/v1/tasks?scope=open&sort=budget&cursor={by_text}"))
    assert ("query", "cursor") in _problem(alice_api.get(f"/api/v1/tasks?scope=open&q=survey&cursor={by_budget}"))


def test_a_category_search_reads_its_total_from_the_kept_counts(alice_api, made):
    with CaptureQueriesContext(connection) as queries:
        body = alice_api.get("/api/v1/tasks?scope=open&category=research&category=data&limit=2").json()

    assert body["total"] == 5 and body["total_exact"]
    assert not [q["sql"] for q in queries if "COUNT(" in q["sql"].upper() and "tasks_market_task" in q["sql"]]


def test_the_category_counts_follow_every_write_and_reconcile(alice, made):
    task = Task.objects.get(pk=made[6])
    Task.objects.filter(pk=made[1]).update(category="design")  # open, moved between categories
    Task.objects.filter(pk=made[2]).update(status=TaskStatus.CANCELLED)  # out of the open list
    Task.objects.filter(pk=made[8]).update(status=TaskStatus.OPEN)  # back in
    Task.objects.filter(pk=made[5]).update(title="renamed")  # in place
    task.delete()

    kept = {name: counters.count_of(open_in_category(name)) for name in ("research", "design", "data", "content")}
    assert kept == {"research": 1, "design": 2, "data": 2, "content": 1}
    report = counters.counters_reconcile(fix=False)
    assert {name: entry["drift"] for name, entry in report.items() if name.startswith("tasks.open")} == {
        name: 0 for name in report if name.startswith("tasks.open")
    }


def test_a_text_search_counts_up_to_its_cap_and_says_so(alice_api, made, monkeypatch):
    monkeypatch.setattr(task_search, "SEARCH_TOTAL_CAP", 3)

    first = alice_api.get("/api/v1/tasks?scope=open&q=research&limit=2").json()
    walked, _bodies = _walk(alice_api, "/api/v1/tasks?scope=open&q=research&limit=2")
    under = alice_api.get("/api/v1/tasks?scope=open&q=survey").json()

    ranked = alice_api.get("/api/v1/tasks?scope=open&q=research&sort=relevance").json()

    assert (first["total"], first["total_exact"], first["has_more"]) == (3, False, True)
    assert search_cases.numbers(walked, made) == [1, 2, 3]  # the first three of four matches, as far as the cap
    assert (under["total"], under["total_exact"]) == (2, True)
    # relevance ranks the reachable matches (the newest three): 6, the oldest match, is not among them
    assert (ranked["total"], ranked["total_exact"]) == (3, False)
    assert sorted(search_cases.numbers([i["id"] for i in ranked["items"]], made)) == [1, 2, 3]


@pytest.mark.django_db(transaction=True)  # kept pages are neither kept nor served inside a transaction
def test_a_search_of_the_open_list_is_kept_until_an_open_task_is_written(alice_api, made):
    url = "/api/v1/tasks?scope=open&category=research"
    first = alice_api.get(url).json()
    with CaptureQueriesContext(connection) as queries:
        again = alice_api.get(url).json()
    Task.objects.filter(pk=made[6]).update(title="Research interviews, renamed")
    after = alice_api.get(url).json()

    assert again == first
    assert not [q for q in queries if 'FROM "tasks_market_task"' in q["sql"]]  # only the stamp was read
    assert [i["title"] for i in after["items"]][-1] == "Research interviews, renamed"


def test_a_text_search_reads_the_text_index(alice, made):
    """On PostgreSQL the text query is the migration's indexed expression: among many open tasks that do not
    match, the planner reads the GIN index rather than every open row."""
    from tasks_market.selectors import tasks_list

    _copy_rows("tasks_market_task", f"id = '{made[7]}'", 10000)
    queryset = task_search.searched(tasks_list(alice, scope="open"), {"q": "research"})

    plan = queryset.explain()

    assert "task_open_text" in plan, plan
