"""The open-task count is kept exactly, whoever writes (core.counters; docs/decisions.md#lists)."""

from __future__ import annotations

import threading

import pytest
from django.db import connection, connections, transaction

from core import counters
from tasks_market.counters import OPEN_TASKS
from tasks_market.models import Task, TaskStatus
from tests.tasks_market.factories import TaskFactory


def _open() -> int:
    return Task.objects.filter(status=TaskStatus.OPEN).count()


@pytest.mark.django_db
def test_every_kind_of_write_keeps_the_count(alice, bob):
    tasks = [TaskFactory(poster=alice) for _ in range(3)]
    TaskFactory(poster=bob, status=TaskStatus.CANCELLED)
    assert counters.count_of(OPEN_TASKS) == _open() == 3

    Task.objects.filter(pk=tasks[0].pk).update(status=TaskStatus.CANCELLED)  # QuerySet.update
    Task.objects.filter(pk=tasks[1].pk).update(title="renamed")  # no move in or out
    tasks[2].delete()
    assert counters.count_of(OPEN_TASKS) == _open() == 1

    with connection.cursor() as cursor:  # bulk SQL, as the bench and the peer comparison add rows
        cursor.execute(
            "INSERT INTO tasks_market_task SELECT * FROM tasks_market_task WHERE false"  # no row: no change
        )
    try:
        with transaction.atomic():
            TaskFactory(poster=alice)
            raise RuntimeError
    except RuntimeError:
        pass
    assert counters.count_of(OPEN_TASKS) == _open() == 1


@pytest.mark.django_db
def test_the_reconciliation_reports_and_fixes_drift(alice):
    TaskFactory(poster=alice)
    from core.models import Counter

    Counter.objects.filter(name=OPEN_TASKS).update(value=0)
    Counter.objects.create(name=OPEN_TASKS, shard=counters.SHARDS - 1, value=5)

    report = counters.counters_reconcile()

    assert report[OPEN_TASKS] == {"kept": 5, "actual": 1, "drift": -4}
    assert counters.count_of(OPEN_TASKS) == 1
    assert counters.counters_reconcile()[OPEN_TASKS]["drift"] == 0


THREADS, ROUNDS = 8, 6


@pytest.mark.django_db(transaction=True)
def test_concurrent_creates_selects_cancels_and_completes_never_drift(alice):
    """Threads released together, each in its own transactions: the kept count equals a fresh COUNT."""
    from datetime import timedelta
    from decimal import Decimal

    from django.utils import timezone

    from tasks_market.services import tasks as services

    start = threading.Barrier(THREADS)
    failures: list[BaseException] = []

    def worker(number: int) -> None:
        try:
            start.wait()
            for round_number in range(ROUNDS):
                task = services.task_create(
                    poster=alice,
                    title=f"t{number}-{round_number}",
                    description="d",
                    budget_amount=Decimal("10.00"),
                    budget_currency="usd",
                    deadline=timezone.now() + timedelta(days=3),
                    category="content",
                    requirements=[],
                )
                move = (number + round_number) % 4
                if move == 1:  # cancelled by its poster
                    services.task_cancel(task_id=task.pk, poster=alice)
                elif move in (2, 3):  # a bid selected (open → awaiting payment), then perhaps completed
                    with transaction.atomic():
                        locked = Task.objects.select_for_update().get(pk=task.pk)
                        locked.status = TaskStatus.AWAITING_PAYMENT
                        locked.save(update_fields=["status", "updated_at"])
                    if move == 3:
                        Task.objects.filter(pk=task.pk).update(status=TaskStatus.COMPLETED, completed_at=timezone.now())
        except BaseException as exc:
            failures.append(exc)
        finally:
            connections.close_all()

    threads = [threading.Thread(target=worker, args=(n,)) for n in range(THREADS)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()

    assert failures == []
    assert counters.counters_reconcile(fix=False)[OPEN_TASKS]["drift"] == 0
    assert counters.count_of(OPEN_TASKS) == _open() == THREADS * ROUNDS // 4


@pytest.mark.django_db
def test_the_command_reports_drift_and_check_fails_on_it(alice):
    from django.core.management import CommandError, call_command

    from core.models import Counter

    TaskFactory(poster=alice)
    Counter.objects.filter(name=OPEN_TASKS).update(value=7)

    with pytest.raises(CommandError):
        call_command("counters_reconcile", "--check")
    call_command("counters_reconcile")
    call_command("counters_reconcile", "--check")
    assert counters.count_of(OPEN_TASKS) == 1
