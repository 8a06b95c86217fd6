"""One caller's lists at size, in process (docs/decisions.md#lists): requests/s, p50 and p99 of
`GET /api/v1/tasks?scope=mine&status=open` for a poster with 100 and then 1,000,000 open tasks, and of a
task's bids (`GET /api/v1/tasks/{id}/bids`, as its poster) at 100 and then `--bids` bids. Their totals are
grouped kept counts (tasks_market.counters): the target is at least 0.8 of the 100-row requests/s at size.

    .venv/bin/python scripts/testenv.py -- .venv/bin/python -m bench.own_lists --tasks 1000000 --bids 1000000

Migrates a fresh PostgreSQL database, adds the rows in bulk SQL (the open tasks as bench.search loads them),
VACUUM ANALYZE, then sends `--requests` requests one after another through the Django test client (the
whole stack: middleware, JWT, the view, the rendering). For comparison it also times the COUNT(*) the
total cost before. Prints a Markdown table; not run by `make test`.
"""

from __future__ import annotations

import argparse
import os
import statistics
import time

from bench.run import clone_rows, create_database
from bench.search import LOAD


def measure(client, url: str, requests: int) -> dict[str, float]:
    """`requests` GETs one after another (after 10 unmeasured): requests/s, p50 and p99 in ms, the total."""
    for _ in range(10):
        client.get(url)
    times, total = [], None
    began = time.perf_counter()
    for _ in range(requests):
        start = time.perf_counter()
        response = client.get(url)
        times.append((time.perf_counter() - start) * 1000)
        if response.status_code != 200:
            raise SystemExit(f"{url}: {response.status_code} {response.content[:300]!r}")
        total = response.json()["total"]
    elapsed = time.perf_counter() - began
    times.sort()
    return {
        "rps": requests / elapsed,
        "p50": statistics.median(times),
        "p99": times[min(len(times) - 1, int(len(times) * 0.99))],
        "total": total,
    }


def timed_count(queryset) -> float:
    """Milliseconds of the COUNT(*) the list's total would have cost (median of 5)."""
    times = []
    for _ in range(5):
        start = time.perf_counter()
        queryset.count()
        times.append((time.perf_counter() - start) * 1000)
    return statistics.median(times)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--tasks", type=int, default=1_000_000)
    parser.add_argument("--bids", type=int, default=1_000_000)
    parser.add_argument("--requests", type=int, default=400)
    args = parser.parse_args()
    os.environ.setdefault("DJANGO_SETTINGS_MODULE", "config.settings.test")
    create_database(os.environ["DATABASE_URL"])  # testenv's server, a database of its own
    import django

    django.setup()
    from django.core.management import call_command
    from django.db import connection
    from django.test.utils import setup_test_environment

    from accounts.models import User
    from core.models import RateLimitOverride
    from tasks_market.models import Bid, Task
    from tests.conftest import client_with_token, jwt_for
    from tests.tasks_market.factories import BidFactory, TaskFactory

    setup_test_environment()  # the test client's host is allowed

    call_command("migrate", verbosity=0)
    poster = User.objects.create_user(email="bench-own@example.com", password="x-Very-long-pass-1")
    RateLimitOverride.objects.create(network="127.0.0.1", rule="*", limit=10**9, reason="bench")
    client = client_with_token(jwt_for(poster))  # over HTTPS, as the API requires

    bid_task = TaskFactory(poster=poster, category="other")
    template = BidFactory(task=bid_task)
    mine = "/api/v1/tasks?scope=mine&status=open&limit=20"
    bids = f"/api/v1/tasks/{bid_task.pk}/bids?limit=20"

    def fill_tasks(count: int) -> None:
        with connection.cursor() as cursor:
            cursor.execute(LOAD, {"poster": poster.pk, "count": count})

    def fill_bids(count: int) -> None:
        overrides = {
            "id": "gen_random_uuid()",
            "created_at": "t.created_at - n * interval '1 millisecond'",
            "status": "'rejected'",  # one live bid per agent and task: the copies are past ones
        }
        with connection.cursor() as cursor:
            clone_rows(cursor, Bid, template.pk, count, overrides)

    def analyze() -> None:
        with connection.cursor() as cursor:
            cursor.execute("VACUUM ANALYZE tasks_market_task")
            cursor.execute("VACUUM ANALYZE tasks_market_bid")
            cursor.execute("VACUUM ANALYZE core_counter")

    rows = []
    fill_tasks(99)  # with the task the bids are on: 100 tasks, 99 open
    fill_bids(99)
    analyze()
    small = {"mine": measure(client, mine, args.requests), "bids": measure(client, bids, args.requests)}

    started = time.monotonic()
    fill_tasks(args.tasks - 99)
    fill_bids(args.bids - 99)
    analyze()
    print(f"loaded {args.tasks:,} tasks and {args.bids:,} bids in {time.monotonic() - started:.0f} s")
    large = {"mine": measure(client, mine, args.requests), "bids": measure(client, bids, args.requests)}
    counted = {
        "mine": timed_count(Task.objects.filter(poster=poster, status="open")),
        "bids": timed_count(Bid.objects.filter(task=bid_task)),
    }

    rows += [
        f"| list ({args.requests} requests each, one after another) | rows | requests/s | p50 | p99 "
        "| at size / at 100 | COUNT(*) it no longer runs |",
        "|---|---:|---:|---:|---:|---:|---:|",
    ]
    labels = {"mine": "`GET /api/v1/tasks?scope=mine&status=open`", "bids": "`GET /api/v1/tasks/{id}/bids`"}
    for key, label in labels.items():
        for size, result in (("small", small[key]), ("large", large[key])):
            ratio = f"{large[key]['rps'] / small[key]['rps']:.2f}" if size == "large" else ""
            cost = f"{counted[key]:.0f} ms" if size == "large" else ""
            rows.append(
                f"| {label} | {result['total']:,} | {result['rps']:.0f} | {result['p50']:.1f} ms "
                f"| {result['p99']:.1f} ms | {ratio} | {cost} |"
            )
    print("\n".join(rows))


if __name__ == "__main__":
    main()
