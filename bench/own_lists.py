"""One caller's lists at size, in process (docs/decisions.md#lists): requests/s, p50 and p99 of each list of
one caller whose `total` is a grouped kept count (core.db.counters), for a caller with 100 rows in it and for
another with the list at size, in the same database:

- `tasks`: `GET /api/v1/tasks?scope=mine&status=open`, a poster's open tasks (100, then `--tasks`);
- `bids`: `GET /api/v1/tasks/{id}/bids`, a task's bids as its poster (100, then `--bids`);
- `earnings`, `payouts`: `GET /api/v1/payouts/earnings` and `GET /api/v1/payouts`, a seller's;
- `deliveries`: `GET /api/v1/webhooks/subscriptions/{id}/deliveries?status=succeeded`, one subscription's;
- `apikeys`: `GET /api/v1/auth/api-keys`, a user's usable API keys;
- `agents`: `GET /api/v1/agents`, a user's agents (each 100, then `--rows`).

The target is at least 0.8 of the 100-row requests/s at size.

    .venv/bin/python scripts/testenv.py -- .venv/bin/python -m bench.own_lists --tasks 1000000 --bids 1000000 \
        --rows 1000000 [--lists tasks,bids,earnings,payouts,deliveries,apikeys,agents] [--requests 400] [--rounds 5]

Migrates a fresh PostgreSQL database, makes one row of each list for each of the two callers with the tests'
factories or the services, adds the others in bulk SQL (the open tasks as bench.search loads them, the rest
copies of that row with bench.run.clone_rows: the statement triggers keep the counts), VACUUM ANALYZE, then
sends `--requests` requests to each caller's list one after another through the Django test client (the
whole stack: middleware, JWT, the view, the rendering), in `--rounds` rounds that alternate the two callers
(and which of them goes first), so that a change in the machine's load meanwhile weighs on both alike. Every
answered `total` must equal the rows loaded (the exit status is not 0 otherwise). For comparison it also times
the COUNT(*) each total cost before. Prints a Markdown table; not run by `make test`.
"""

from __future__ import annotations

import argparse
import os
import statistics
import time
from collections.abc import Callable
from dataclasses import dataclass

from django.db import connection
from django.db.models import QuerySet

from bench.run import clone_rows, create_database
from bench.search import LOAD


def measure(client, url: str, requests: int) -> tuple[list[float], float, int]:
    """`requests` GETs one after another: each one's time in ms, the time of them all in s, the last total."""
    times, total = [], None
    began = time.perf_counter()
    for _ in range(requests):
        start = time.perf_counter()
        response = client.get(url)
        times.append((time.perf_counter() - start) * 1000)
        if response.status_code != 200:
            raise SystemExit(f"{url}: {response.status_code} {response.content[:300]!r}")
        total = response.json()["total"]
    return times, time.perf_counter() - began, total


def summary(times: list[float], elapsed: float) -> dict[str, float]:
    times = sorted(times)
    return {
        "rps": len(times) / elapsed,
        "p50": statistics.median(times),
        "p99": times[min(len(times) - 1, int(len(times) * 0.99))],
    }


def timed_count(queryset) -> float:
    """Milliseconds of the COUNT(*) the list's total would have cost (median of 5)."""
    times = []
    for _ in range(5):
        start = time.perf_counter()
        queryset.count()
        times.append((time.perf_counter() - start) * 1000)
    return statistics.median(times)


@dataclass
class OwnList:
    """One list of the caller: its URL, its table, how to add `count` rows after the first `start`, the rows its
    total counts (for the COUNT it no longer runs), how many it holds at size and before any is added."""

    label: str
    url: str
    table: str
    fill: Callable[[int, int], None]
    rows: QuerySet
    size: int
    first: int = 1  # the row made by a factory or a service, that the others copy


def copies(model, template_pk, unique: dict[str, str]) -> Callable[[int, int], None]:
    """`fill(start, count)`: `count` copies of the template, numbered from `start + 1` (`{m}` in `unique`, the
    SQL of the columns that must differ), a new id each and created a millisecond apart, older and older."""

    def fill(start: int, count: int) -> None:
        number = f"(n + {int(start)})"
        overrides = {
            "id": "gen_random_uuid()",
            "created_at": f"t.created_at - {number} * interval '1 millisecond'",
            **{column: sql.format(m=number) for column, sql in unique.items()},
        }
        with connection.cursor() as cursor:
            clone_rows(cursor, model, template_pk, count, overrides)

    return fill


def own_lists(names: list[str], caller, args, tag: str) -> dict[str, OwnList]:
    """The lists `names` of `caller`, each with its first row (made with the tests' factories or the services);
    `tag` (one letter) tells the callers' unique values apart."""
    from django.utils import timezone

    from accounts.models import ApiKey, User
    from accounts.services import api_key_create
    from payments.models import Earning, Payout, PayoutAccount
    from tasks_market.models import Agent, Bid, Task
    from tests.tasks_market.factories import AgentFactory, BidFactory, TaskFactory
    from tests.webhooks_app.factories import WebhookSubscriptionFactory
    from webhooks_app.models import WebhookDelivery, WebhookEvent

    made: dict[str, OwnList] = {}
    for name in names:
        if name == "tasks":

            def fill_tasks(start: int, count: int) -> None:
                with connection.cursor() as cursor:
                    cursor.execute(LOAD, {"poster": caller.pk, "count": count})

            made[name] = OwnList(
                "`GET /api/v1/tasks?scope=mine&status=open`",
                "/api/v1/tasks?scope=mine&status=open&limit=20",
                "tasks_market_task",
                fill_tasks,
                Task.objects.filter(poster=caller, status="open"),
                args.tasks,
                first=int("bids" in names),  # the task the bids are on is one of the open tasks
            )
        elif name == "bids":
            task = TaskFactory(poster=caller, category="other")
            bid = BidFactory(task=task)
            made[name] = OwnList(
                "`GET /api/v1/tasks/{id}/bids` (as its poster)",
                f"/api/v1/tasks/{task.pk}/bids?limit=20",
                "tasks_market_bid",
                copies(Bid, bid.pk, {"status": "'rejected'"}),  # one live bid per agent and task: past ones
                Bid.objects.filter(task=task),
                args.bids,
            )
        elif name == "earnings":
            earning = Earning.objects.create(
                owner=caller, source=f"task:bench-{tag}", payment_ref="pi_bench", provider="local", currency="usd",
                gross=100, fee=10, amount=90, available_after=timezone.now(),
            )  # fmt: skip
            made[name] = OwnList(
                "`GET /api/v1/payouts/earnings`",
                "/api/v1/payouts/earnings?limit=20",
                "payments_earning",
                copies(Earning, earning.pk, {"source": f"'task:bench-{tag}-' || {{m}}"}),
                Earning.objects.filter(owner=caller),
                args.rows,
            )
        elif name == "payouts":
            account = PayoutAccount.objects.create(
                owner=caller, provider="local", provider_account_id=f"acct_bench_{tag}"
            )
            payout = Payout.objects.create(
                owner=caller,
                account=account,
                amount=90,
                currency="usd",
                idempotency_key=f"payout:bench-{tag}",
                status="paid",
            )
            made[name] = OwnList(
                "`GET /api/v1/payouts`",
                "/api/v1/payouts?limit=20",
                "payments_payout",
                copies(Payout, payout.pk, {"idempotency_key": f"'payout:bench-{tag}-' || {{m}}"}),
                Payout.objects.filter(owner=caller),
                args.rows,
            )
        elif name == "deliveries":
            subscription = WebhookSubscriptionFactory(owner=caller)
            event = WebhookEvent.objects.create(owner=caller, type="task.created", body="{}")
            delivery = WebhookDelivery.objects.create(
                event=event, subscription=subscription, message_id=f"msg_bench_{tag}", status="succeeded"
            )
            made[name] = OwnList(
                "`GET /api/v1/webhooks/subscriptions/{id}/deliveries?status=succeeded`",
                f"/api/v1/webhooks/subscriptions/{subscription.pk}/deliveries?status=succeeded&limit=20",
                "webhooks_app_webhookdelivery",
                copies(WebhookDelivery, delivery.pk, {"message_id": f"'msg_bench_{tag}_' || {{m}}"}),
                WebhookDelivery.objects.filter(subscription=subscription, status="succeeded"),
                args.rows,
            )
        elif name == "apikeys":
            User.objects.filter(pk=caller.pk).update(email_verified_at=timezone.now())
            caller.refresh_from_db()
            key = api_key_create(user=caller, name="bench").api_key
            made[name] = OwnList(
                "`GET /api/v1/auth/api-keys`",
                "/api/v1/auth/api-keys?limit=20",
                "accounts_apikey",
                # The prefix is unique: 8 characters from the number (digits only, after the tag); the hash too.
                copies(
                    ApiKey,
                    key.pk,
                    {
                        "prefix": f"'{tag}' || lpad({{m}}::text, 7, '0')",
                        "key_hash": f"encode(sha256(('bench{tag}' || {{m}})::bytea), 'hex')",
                    },
                ),
                ApiKey.objects.active().filter(user=caller),
                args.rows,
            )
        elif name == "agents":
            agent = AgentFactory(owner=caller)
            made[name] = OwnList(
                "`GET /api/v1/agents`",
                "/api/v1/agents?limit=20",
                "tasks_market_agent",
                copies(Agent, agent.pk, {"name": "'Agent ' || {m}"}),
                Agent.objects.filter(owner=caller),
                args.rows,
            )
    return made


LISTS = ("tasks", "bids", "earnings", "payouts", "deliveries", "apikeys", "agents")
SMALL = 100


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--tasks", type=int, default=1_000_000)
    parser.add_argument("--bids", type=int, default=1_000_000)
    parser.add_argument("--rows", type=int, default=1_000_000, help="rows of each other list at size")
    parser.add_argument("--requests", type=int, default=400, help="to each caller's list")
    parser.add_argument("--rounds", type=int, default=5, help="the requests split in this many alternations")
    parser.add_argument("--lists", default=",".join(LISTS), help="comma-separated, of: " + ", ".join(LISTS))
    args = parser.parse_args()
    names = [name.strip() for name in args.lists.split(",") if name.strip()]
    unknown = sorted(set(names) - set(LISTS))
    if unknown or not names:
        parser.error(f"--lists: {', '.join(unknown) or 'none'} (one or more of {', '.join(LISTS)})")
    if min(args.tasks, args.bids, args.rows) < SMALL:
        parser.error(f"--tasks, --bids and --rows: at least {SMALL} (the first caller has {SMALL} rows)")
    if not 1 <= args.rounds <= args.requests:
        parser.error("--rounds: from 1 to --requests")
    os.environ.setdefault("DJANGO_SETTINGS_MODULE", "config.settings.test")
    create_database(os.environ["DATABASE_URL"])  # testenv's server, a database of its own
    import django

    django.setup()
    from django.core.management import call_command
    from django.test.utils import setup_test_environment

    from accounts.models import User
    from core.models import RateLimitOverride
    from tests.conftest import client_with_token, jwt_for

    setup_test_environment()  # the test client's host is allowed

    call_command("migrate", verbosity=0)
    RateLimitOverride.objects.create(network="127.0.0.1", rule="*", limit=10**9, reason="bench")
    callers = {}
    for size, tag in (("small", "y"), ("large", "z")):
        caller = User.objects.create_user(email=f"bench-own-{size}@example.com", password="x-Very-long-pass-1")
        callers[size] = (own_lists(names, caller, args, tag), client_with_token(jwt_for(caller)))  # over HTTPS

    # The first row of each list is there: the small caller's up to 100, the large one's up to its size.
    started = time.monotonic()
    for size, (lists, _client) in callers.items():
        for own in lists.values():
            own.fill(0, (SMALL if size == "small" else own.size) - own.first)
    with connection.cursor() as cursor:
        for table in {own.table for own in callers["large"][0].values()} | {"core_counter"}:
            cursor.execute(f'VACUUM ANALYZE "{table}"')
    loaded = ", ".join(f"{own.size:,} {name}" for name, own in callers["large"][0].items())
    print(f"loaded {loaded} in {time.monotonic() - started:.0f} s")

    times = {(name, size): ([], 0.0) for name in names for size in callers}
    ratios: dict[str, list[float]] = {name: [] for name in names}
    for lists, client in callers.values():  # warm-up, unmeasured
        for own in lists.values():
            measure(client, own.url, 10)
    for round_number in range(args.rounds):
        share = args.requests // args.rounds + (round_number < args.requests % args.rounds)
        order = list(callers.items())
        if round_number % 2:  # each caller first in every other round: neither gains from going second
            order.reverse()
        for name in names:
            rps = {}
            for size, (lists, client) in order:
                taken, elapsed, total = measure(client, lists[name].url, share)
                loaded = SMALL if size == "small" else lists[name].size
                if total != loaded:
                    raise SystemExit(f"{lists[name].url}: total {total:,}, {loaded:,} rows loaded")
                kept, spent = times[name, size]
                times[name, size] = (kept + taken, spent + elapsed)
                rps[size] = share / elapsed
            ratios[name].append(rps["large"] / rps["small"])
    counted = {name: timed_count(own.rows) for name, own in callers["large"][0].items()}

    rows = [
        f"| list ({args.requests} requests each, one after another, {args.rounds} rounds) | rows | requests/s | p50 "
        "| p99 | at size / at 100 (rounds) | COUNT(*) it no longer runs |",
        "|---|---:|---:|---:|---:|---:|---:|",
    ]
    for name in names:
        for size, (lists, _client) in callers.items():
            result = summary(*times[name, size])
            ratio, cost = "", ""
            if size == "large":
                overall = result["rps"] / summary(*times[name, "small"])["rps"]
                ratio = f"{overall:.2f} ({min(ratios[name]):.2f}-{max(ratios[name]):.2f})"
                cost = f"{counted[name]:.0f} ms"
            rows.append(
                f"| {lists[name].label} | {SMALL if size == 'small' else lists[name].size:,} | {result['rps']:.0f} "
                f"| {result['p50']:.1f} ms | {result['p99']:.1f} ms | {ratio} | {cost} |"
            )
    print("\n".join(rows))


if __name__ == "__main__":
    main()
