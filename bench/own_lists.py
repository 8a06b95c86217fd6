"""One caller's lists at size, in process (docs/decisions.md#lists): requests/s, p50 and p99 of each list of
one caller whose `total` is a grouped kept count (core.db.counters), at about 100 rows and then at size:

- `tasks`: `GET /api/v1/tasks?scope=mine&status=open`, a poster's open tasks (100, then `--tasks`);
- `bids`: `GET /api/v1/tasks/{id}/bids`, a task's bids as its poster (100, then `--bids`);
- `earnings`, `payouts`: `GET /api/v1/payouts/earnings` and `GET /api/v1/payouts`, a seller's;
- `deliveries`: `GET /api/v1/webhooks/subscriptions/{id}/deliveries`, one subscription's (no status);
- `apikeys`: `GET /api/v1/auth/api-keys`, a user's usable API keys;
- `agents`: `GET /api/v1/agents`, a user's agents (each 100, then `--rows`).

The target is at least 0.8 of the 100-row requests/s at size.

    .venv/bin/python scripts/testenv.py -- .venv/bin/python -m bench.own_lists --tasks 1000000 --bids 1000000 \
        --rows 1000000 [--lists tasks,bids,earnings,payouts,deliveries,apikeys,agents] [--requests 400]

Migrates a fresh PostgreSQL database, makes one row of each list with the tests' factories or the services,
adds the others in bulk SQL (the open tasks as bench.search loads them, the rest copies of that row with
bench.run.clone_rows: the statement triggers keep the counts), VACUUM ANALYZE, then sends `--requests`
requests one after another through the Django test client (the whole stack: middleware, JWT, the view, the
rendering). Every answered `total` must equal the rows loaded (the exit status is not 0 otherwise). For
comparison it also times the COUNT(*) each total cost before. Prints a Markdown table; not run by `make test`.
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


def own_lists(names: list[str], caller, args) -> dict[str, OwnList]:
    """The lists `names`, each with its first row (made with the tests' factories or the services)."""
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
                owner=caller, source="task:bench", payment_ref="pi_bench", provider="local", currency="usd",
                gross=100, fee=10, amount=90, available_after=timezone.now(),
            )  # fmt: skip
            made[name] = OwnList(
                "`GET /api/v1/payouts/earnings`",
                "/api/v1/payouts/earnings?limit=20",
                "payments_earning",
                copies(Earning, earning.pk, {"source": "'task:bench-' || {m}"}),
                Earning.objects.filter(owner=caller),
                args.rows,
            )
        elif name == "payouts":
            account = PayoutAccount.objects.create(owner=caller, provider="local", provider_account_id="acct_bench")
            payout = Payout.objects.create(
                owner=caller, account=account, amount=90, currency="usd", idempotency_key="payout:bench", status="paid"
            )
            made[name] = OwnList(
                "`GET /api/v1/payouts`",
                "/api/v1/payouts?limit=20",
                "payments_payout",
                copies(Payout, payout.pk, {"idempotency_key": "'payout:bench-' || {m}"}),
                Payout.objects.filter(owner=caller),
                args.rows,
            )
        elif name == "deliveries":
            subscription = WebhookSubscriptionFactory(owner=caller)
            event = WebhookEvent.objects.create(owner=caller, type="task.created", body="{}")
            delivery = WebhookDelivery.objects.create(
                event=event, subscription=subscription, message_id="msg_bench", status="succeeded"
            )
            made[name] = OwnList(
                "`GET /api/v1/webhooks/subscriptions/{id}/deliveries`",
                f"/api/v1/webhooks/subscriptions/{subscription.pk}/deliveries?limit=20",
                "webhooks_app_webhookdelivery",
                copies(WebhookDelivery, delivery.pk, {"message_id": "'msg_bench_' || {m}"}),
                WebhookDelivery.objects.filter(subscription=subscription),
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
                # The prefix is unique: 8 characters from the number (digits only, after a 'z'); the hash too.
                copies(
                    ApiKey,
                    key.pk,
                    {
                        "prefix": "'z' || lpad({m}::text, 7, '0')",
                        "key_hash": "encode(sha256(('bench' || {m})::bytea), 'hex')",
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
    parser.add_argument("--requests", type=int, default=400)
    parser.add_argument("--lists", default=",".join(LISTS), help="comma-separated, of: " + ", ".join(LISTS))
    args = parser.parse_args()
    names = [name.strip() for name in args.lists.split(",") if name.strip()]
    unknown = sorted(set(names) - set(LISTS))
    if unknown or not names:
        parser.error(f"--lists: {', '.join(unknown) or 'none'} (one or more of {', '.join(LISTS)})")
    if min(args.tasks, args.bids, args.rows) < SMALL:
        parser.error(f"--tasks, --bids and --rows: at least {SMALL} (the first run is at {SMALL} rows)")
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
    caller = User.objects.create_user(email="bench-own@example.com", password="x-Very-long-pass-1")
    RateLimitOverride.objects.create(network="127.0.0.1", rule="*", limit=10**9, reason="bench")
    lists = own_lists(names, caller, args)
    client = client_with_token(jwt_for(caller))  # over HTTPS, as the API requires

    def load(counts: dict[str, tuple[int, int]]) -> None:
        """Adds, to each list, rows numbered from `start + 1` to `start + count` (`counts[name]`)."""
        for name, own in lists.items():
            own.fill(*counts[name])
        with connection.cursor() as cursor:
            for table in {own.table for own in lists.values()} | {"core_counter"}:
                cursor.execute(f'VACUUM ANALYZE "{table}"')

    def measured(size: str) -> dict[str, dict[str, float]]:
        results = {}
        for name, own in lists.items():
            result = measure(client, own.url, args.requests)
            loaded = SMALL if size == "small" else own.size
            if result["total"] != loaded:
                raise SystemExit(f"{own.url}: total {result['total']:,}, {loaded:,} rows loaded")
            results[name] = result
        return results

    # The first row of each list is there: up to 100, then the rest up to its size.
    load({name: (0, SMALL - own.first) for name, own in lists.items()})
    small = measured("small")
    started = time.monotonic()
    load({name: (SMALL - own.first, own.size - SMALL) for name, own in lists.items()})
    loaded = ", ".join(f"{own.size:,} {name}" for name, own in lists.items())
    print(f"loaded {loaded} in {time.monotonic() - started:.0f} s")
    large = measured("large")
    counted = {name: timed_count(own.rows) for name, own in lists.items()}

    rows = [
        f"| list ({args.requests} requests each, one after another) | rows | requests/s | p50 | p99 "
        "| at size / at 100 | COUNT(*) it no longer runs |",
        "|---|---:|---:|---:|---:|---:|---:|",
    ]
    for name, own in lists.items():
        for size, result in (("small", small[name]), ("large", large[name])):
            ratio = f"{large[name]['rps'] / small[name]['rps']:.2f}" if size == "large" else ""
            cost = f"{counted[name]:.0f} ms" if size == "large" else ""
            rows.append(
                f"| {own.label} | {result['total']:,} | {result['rps']:.0f} | {result['p50']:.1f} ms "
                f"| {result['p99']:.1f} ms | {ratio} | {cost} |"
            )
    print("\n".join(rows))


if __name__ == "__main__":
    main()
