"""Threads released together that move tasks in and out of the open list, each write in its own
transaction: shared by the kept-count tests on PostgreSQL and on SQLite (core.db.counters).

    DJANGO_SETTINGS_MODULE=config.settings.local VAR_DIR=<dir> python -m tests.tasks_market.counts_churn

migrates the embedded SQLite database, checks the task search's cases (tests.tasks_market.search_cases), churns,
and prints one JSON line: failures, the kept count and a fresh COUNT.
"""

from __future__ import annotations

import json
import threading
from datetime import timedelta
from decimal import Decimal

THREADS, ROUNDS = 8, 6
SQLITE_THREADS, SQLITE_ROUNDS = 4, 4  # one writer at a time there: fewer, to keep the suite short


def churn(poster, threads: int = THREADS, rounds: int = ROUNDS) -> list[str]:
    """Each thread creates tasks through the service, then cancels a quarter of them (service), selects a
    bid on a half (service: open → awaiting payment) and completes half of those (`QuerySet.update`: the
    rest of the way is payments and deliveries, none of which moves a task in or out of the open list).
    Returns the failures."""
    from django.db import connections
    from django.utils import timezone

    from tasks_market.models import Task, TaskStatus
    from tasks_market.services import bids
    from tasks_market.services import posting as services
    from tests.tasks_market.factories import BidFactory

    start = threading.Barrier(threads)
    failures: list[str] = []

    def worker(number: int) -> None:
        try:
            start.wait()
            for round_number in range(rounds):
                task = services.task_create(
                    poster=poster,
                    title=f"t{number}-{round_number}",
                    description="d",
                    budget_amount=Decimal("10.00"),
                    budget_currency="usd",
                    deadline=timezone.now() + timedelta(days=3),
                    category="content",
                    requirements=[],
                )
                move = (number + round_number) % 4
                if move == 1:
                    services.task_cancel(task_id=task.pk, poster=poster)
                elif move in (2, 3):  # a bid, selected through the service (its payment at the local provider)
                    bid = BidFactory(task=task)
                    bids.bid_select(user=poster, task_id=task.pk, bid_id=bid.pk)
                    if move == 3:
                        Task.objects.filter(pk=task.pk).update(status=TaskStatus.COMPLETED, completed_at=timezone.now())
        except Exception as exc:
            failures.append(f"{type(exc).__name__}: {exc}")
        finally:
            connections.close_all()

    workers = [threading.Thread(target=worker, args=(n,)) for n in range(threads)]
    for thread in workers:
        thread.start()
    for thread in workers:
        thread.join()
    return failures


def main() -> None:
    import django

    django.setup()
    from django.core.management import call_command

    from accounts.models import User
    from core.db import counters
    from tasks_market.counters import OPEN_TASKS
    from tasks_market.models import Task, TaskStatus
    from tests.tasks_market import search_cases

    call_command("migrate", verbosity=0)
    poster = User.objects.create_user(email="churn@example.com", password="x-Very-long-pass-1")
    search_failures = search_cases.check(poster)  # the search's cases on this engine (its FTS5 table)
    failures = churn(poster, threads=SQLITE_THREADS, rounds=SQLITE_ROUNDS)
    print(
        json.dumps(
            {
                "vendor": _vendor(),
                "failures": failures,
                "kept": counters.count_of(OPEN_TASKS),
                "actual": Task.objects.filter(status=TaskStatus.OPEN).count(),
                "drift": counters.counters_reconcile(fix=False)[OPEN_TASKS]["drift"],
                "walk_equals_the_list": _walk_by_cursor(),
                "stamp_moves_with_every_write": _stamp_moves(poster),
                "kept_pages_follow_writes": _kept_pages_follow_writes(poster),
                "search_failures": search_failures,
                "grouped": _grouped_after_moves(poster),
            }
        )
    )


def _walk_by_cursor() -> bool:
    """The open list walked 5 rows at a time by cursor (core.api.pagination) is the whole list, in order."""
    from core.api.pagination import keyset_page
    from tasks_market.models import Task, TaskStatus

    rows = Task.objects.filter(status=TaskStatus.OPEN).order_by("-created_at", "-id")
    walked, cursor = [], None
    while True:
        page = keyset_page(rows, limit=5, cursor=cursor)
        walked += [task.pk for task in page.rows]
        if not page.next_cursor:
            return walked == [task.pk for task in rows]
        cursor = page.next_cursor


def _stamp_moves(poster) -> bool:
    """The count's stamp (core.db.counters.stamp_of) changes with a create, a change in place and a move out,
    and not with a write to a row it does not count."""
    from core.db import counters
    from tasks_market.counters import OPEN_TASKS
    from tasks_market.models import Task, TaskStatus
    from tests.tasks_market.factories import TaskFactory

    stamps = [counters.stamp_of(OPEN_TASKS)]
    task = TaskFactory(poster=poster)
    stamps.append(counters.stamp_of(OPEN_TASKS))
    Task.objects.filter(pk=task.pk).update(title="renamed")
    stamps.append(counters.stamp_of(OPEN_TASKS))
    Task.objects.filter(pk=task.pk).update(status=TaskStatus.CANCELLED)
    stamps.append(counters.stamp_of(OPEN_TASKS))
    Task.objects.filter(pk=task.pk).update(title="not counted")
    return len(set(stamps)) == 4 and counters.stamp_of(OPEN_TASKS) == stamps[-1]


def _kept_pages_follow_writes(poster) -> bool:
    """The open list's kept page (core.db.pagecache) is served again while nothing is written, and not after a
    write: the stamps of this engine's triggers, read outside any transaction."""
    from tasks_market.selectors.task_list import OPEN_PAGES, tasks_page
    from tests.tasks_market.factories import TaskFactory

    def read():
        return tasks_page(poster, "open", None, None, limit=100, offset=0)

    first = OPEN_PAGES.page((100, 0, None), read)
    again = OPEN_PAGES.page((100, 0, None), read)
    task = TaskFactory(poster=poster)
    after = OPEN_PAGES.page((100, 0, None), read)
    return again is first and after is not first and task.pk in {row["id"] for row in after.page.rows}


def _grouped_after_moves(poster) -> dict:
    """After the churn, a task with bids moved to another poster, a task and a bid deleted, then every kind of
    write of the grouped counts' own tests (tests/core/test_grouped_counts.py) but PostgreSQL's bulk SQL, each
    on tasks of its own: the drift of every grouped family (core.db.counters.register_grouped) and whether the
    poster's list totals (scope=mine, with and without a status) are their COUNTs."""
    from accounts.models import User
    from core.db import counters
    from tasks_market.models import Task, TaskStatus
    from tasks_market.selectors.task_list import tasks_page
    from tests.core import test_grouped_counts as grouped
    from tests.tasks_market.factories import BidFactory, TaskFactory

    other = User.objects.create_user(email="other@example.com", password="x-Very-long-pass-1")
    moved = Task.objects.filter(poster=poster).exclude(bids=None).first()
    Task.objects.filter(pk=moved.pk).update(poster=other)
    Task.objects.filter(poster=poster, status=TaskStatus.CANCELLED).first().delete()  # a paid one is kept
    BidFactory(task=Task.objects.filter(poster=poster, status=TaskStatus.OPEN).first()).delete()
    for write in grouped.WRITES:
        if write is not grouped._bulk_sql:  # PostgreSQL's SQL (gen_random_uuid)
            tasks = [TaskFactory(poster=poster) for _ in range(3)]
            BidFactory(task=tasks[0])
            write(poster, other, tasks)
    report = counters.counters_reconcile(fix=False)
    totals = {
        status: tasks_page(poster, "mine", status, None, limit=5, offset=0).total
        == Task.objects.filter(poster=poster, **({"status": status} if status else {})).count()
        for status in (None, TaskStatus.OPEN, TaskStatus.COMPLETED)
    }
    return {
        "drift": {family: report[family]["drift"] for family in sorted(counters.registered_grouped())},
        "totals": totals,
    }


def _vendor() -> str:
    from django.db import connection

    return connection.vendor


if __name__ == "__main__":
    main()
