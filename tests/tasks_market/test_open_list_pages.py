"""The open list's kept pages (core.db.pagecache; docs/decisions.md#open-list-pages): served only for the state
they were read in, byte for byte what a fresh read answers, never older than a write that has committed.

Transactional tests: inside a transaction (the usual test) the list reads and keeps nothing."""

from __future__ import annotations

import threading
from contextlib import contextmanager
from decimal import Decimal

import pytest
from django.db import connection, connections, transaction

from core.db import counters
from core.models import Counter
from tasks_market.counters import OPEN_TASKS
from tasks_market.models import Task, TaskStatus
from tasks_market.selectors.task_list import OPEN_PAGES
from tests.conftest import client_with_token, jwt_for
from tests.support.factories import UserFactory
from tests.tasks_market.conftest import post_task
from tests.tasks_market.factories import TaskFactory

pytestmark = pytest.mark.django_db(transaction=True)

OPEN = "/api/v1/tasks?scope=open"


@pytest.fixture(autouse=True)
def _no_kept_pages():
    OPEN_PAGES.clear()
    yield
    OPEN_PAGES.clear()


def fresh(client, url: str = OPEN):
    """The same request read without the kept pages (inside a transaction they are neither read nor kept)."""
    with transaction.atomic():
        return client.get(url)


def headers(response) -> dict:
    """The response's headers but those that differ from one request to the next."""
    volatile = {"X-Request-ID", "X-RateLimit-Remaining", "X-RateLimit-Reset"}
    return {name: value for name, value in response.headers.items() if name not in volatile}


@contextmanager
def task_reads():
    """The statements on the tasks table run meanwhile on this thread's connection (an execute wrapper:
    a request resets the query log that CaptureQueriesContext reads)."""
    seen: list[str] = []

    def record(execute, sql, params, many, context):
        if "tasks_market_task" in sql:
            seen.append(sql)
        return execute(sql, params, many, context)

    with connection.execute_wrapper(record):
        yield seen


def new_task(poster, **fields) -> Task:
    return TaskFactory(poster=poster, **fields)


def test_a_kept_page_is_the_fresh_read_byte_for_byte_for_each_caller(alice, bob):
    carol = UserFactory()
    for _ in range(15):
        new_task(carol)
    mine = [new_task(alice) for _ in range(3)]  # 15th to 17th on the list: on both pages below
    for _ in range(15):
        new_task(carol)
    alice_api, bob_api = client_with_token(jwt_for(alice)), client_with_token(jwt_for(bob))

    first = bob_api.get(OPEN)
    with task_reads() as second_reads:
        second = bob_api.get(OPEN)
    with task_reads() as alices_reads:
        alices = alice_api.get(OPEN + "&offset=5")
    alices_again = alice_api.get(OPEN + "&offset=5")

    assert first.status_code == second.status_code == 200
    assert second_reads == []  # served from the kept page
    assert second.content == first.content == fresh(bob_api).content
    assert headers(second) == headers(fresh(bob_api))
    assert len(alices_reads) == 1  # another page: read, then kept
    assert alices_again.content == alices.content == fresh(alice_api, OPEN + "&offset=5").content
    flags = {item["id"]: item["is_mine"] for item in alices.json()["items"]}
    assert {str(task.pk) for task in mine} <= set(flags) and sum(flags.values()) == 3
    assert not any(item["is_mine"] for item in second.json()["items"])


def test_a_cursor_page_is_kept_too_and_matches_a_fresh_read(alice, bob):
    for _ in range(30):
        new_task(bob)
    api = client_with_token(jwt_for(alice))
    cursor = api.get(OPEN + "&limit=10").json()["next_cursor"]
    url = f"{OPEN}&limit=10&cursor={cursor}"

    api.get(url)
    with task_reads() as reads:
        again = api.get(url)

    assert reads == []
    assert again.content == fresh(api, url).content


def test_an_accept_with_indent_is_rendered_for_it(alice, bob):
    new_task(bob)
    api = client_with_token(jwt_for(alice))
    compact = api.get(OPEN)
    indented = api.get(OPEN, HTTP_ACCEPT="application/json; indent=2")
    compact_again = api.get(OPEN)

    assert b"\n  " in indented.content and b"\n" not in compact.content
    assert compact_again.content == compact.content
    assert indented.json() == compact.json()


def _create(api) -> str:
    return post_task(api, title="fresh")["id"]


def _sql(statement: str, params=()) -> None:
    with connection.cursor() as cursor:
        cursor.execute(statement, params)


def _copy_in_sql(task: Task) -> None:
    """A copy of the task, newer, by one INSERT ... SELECT (as the bench and the peer's --growth add rows)."""
    changed = {"id": "gen_random_uuid()", "title": "title || ' copy'", "created_at": "created_at + interval '1 s'"}
    columns = [field.column for field in Task._meta.concrete_fields]
    _sql(
        f"INSERT INTO tasks_market_task ({', '.join(columns)}) "
        f"SELECT {', '.join(changed.get(column, column) for column in columns)} FROM tasks_market_task WHERE id = %s",
        [task.pk],
    )


# Every way a write reaches the open list's rows; each one's read after it must show it.
WRITES = {
    "created through the API": lambda api, task: _create(api),
    "cancelled through the API": lambda api, task: api.post(f"/api/v1/tasks/{task.pk}/cancel"),
    "QuerySet.update in place": lambda api, task: Task.objects.filter(pk=task.pk).update(title="renamed"),
    "model save in place": lambda api, task: (setattr(task, "budget_amount", Decimal("77.00")), task.save()),
    "QuerySet.update out of the list": lambda api, task: Task.objects.filter(pk=task.pk).update(
        status=TaskStatus.COMPLETED
    ),
    "deleted": lambda api, task: task.delete(),
    "bulk SQL insert": lambda api, task: _copy_in_sql(task),
}


@pytest.mark.parametrize("write", list(WRITES))
def test_no_read_after_a_write_shows_the_state_before_it(alice, bob, write):
    for _ in range(4):
        new_task(bob)
    task = new_task(alice)
    api = client_with_token(jwt_for(alice))
    before = api.get(OPEN)
    assert api.get(OPEN).content == before.content  # kept

    WRITES[write](api, task)
    after = api.get(OPEN)

    assert after.content != before.content
    assert after.content == fresh(api).content


def test_a_reconciled_total_is_not_served_from_before(alice):
    new_task(alice)
    api = client_with_token(jwt_for(alice))
    Counter.objects.filter(name=OPEN_TASKS).update(value=0)  # a drifted count (only by hand)
    drifted = api.get(OPEN)
    assert drifted.json()["total"] == 0 and api.get(OPEN).content == drifted.content

    counters.counters_reconcile()

    assert api.get(OPEN).json()["total"] == 1


def test_what_a_rolled_back_transaction_saw_is_never_served(alice):
    """A transaction sees its own writes under a stamp that its rollback frees: the next write of the same
    backend (same shard) makes that stamp again, with other rows."""
    api = client_with_token(jwt_for(alice))
    new_task(alice, title="committed")
    with transaction.atomic():
        new_task(alice, title="rolled back")
        inside = api.get(OPEN)
        transaction.set_rollback(True)
    new_task(alice, title="next")  # this connection, so the shard the rolled-back write took

    titles = [item["title"] for item in api.get(OPEN).json()["items"]]

    assert "rolled back" in inside.content.decode()
    assert titles == ["next", "committed"]


def test_counts_made_again_after_a_reset_do_not_repeat_a_kept_state(alice):
    """The shards' rows gone and made again (a TRUNCATE, a restored dump) start at random versions."""
    api = client_with_token(jwt_for(alice))
    new_task(alice, title="before the reset")
    before = api.get(OPEN)
    _sql("DELETE FROM tasks_market_task")
    _sql("DELETE FROM core_counter")
    new_task(alice, title="after the reset")

    assert before.json()["items"][0]["title"] == "before the reset"
    assert [item["title"] for item in api.get(OPEN).json()["items"]] == ["after the reset"]


def test_threads_released_together_never_read_a_page_older_than_their_own_write(alice, bob):
    """Writers create and then cancel tasks through the API while readers keep the pages warm: after each
    write's answer, the writer's next read shows it. The kept pages are this process's, shared by all."""
    for _ in range(10):
        new_task(bob)
    writers, readers, rounds = 4, 2, 5
    users = [UserFactory() for _ in range(writers)]
    tokens = [jwt_for(user) for user in users]
    bob_token = jwt_for(bob)
    start = threading.Barrier(writers + readers)
    done = threading.Event()
    failures: list[str] = []

    def writer(number: int) -> None:
        api = client_with_token(tokens[number])
        try:
            start.wait()
            for _ in range(rounds):
                task_id = _create(api)
                listed = {item["id"]: item["is_mine"] for item in api.get(OPEN + "&limit=100").json()["items"]}
                if listed.get(task_id) is not True:
                    failures.append(f"writer {number}: created {task_id}, not listed as its own")
                api.post(f"/api/v1/tasks/{task_id}/cancel")
                if task_id in {item["id"] for item in api.get(OPEN + "&limit=100").json()["items"]}:
                    failures.append(f"writer {number}: cancelled {task_id}, still listed")
        except Exception as exc:
            failures.append(f"writer {number}: {type(exc).__name__}: {exc}")
        finally:
            connections.close_all()

    def reader() -> None:
        api = client_with_token(bob_token)
        try:
            start.wait()
            while not done.is_set():
                for url in (OPEN + "&limit=100", OPEN):
                    if api.get(url).status_code != 200:
                        failures.append("reader: not 200")
        finally:
            connections.close_all()

    threads = [threading.Thread(target=writer, args=(n,)) for n in range(writers)]
    threads += [threading.Thread(target=reader) for _ in range(readers)]
    for thread in threads:
        thread.start()
    for thread in threads[:writers]:
        thread.join()
    done.set()
    for thread in threads[writers:]:
        thread.join()

    api = client_with_token(bob_token)
    assert failures == []
    assert api.get(OPEN + "&limit=100").content == fresh(api, OPEN + "&limit=100").content
    assert api.get(OPEN + "&limit=100").json()["total"] == 10 == counters.count_of(OPEN_TASKS)
