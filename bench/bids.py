"""A task's bids list at size, in process (docs/decisions.md#agent-reputation): does the agent's record on
every bid (`agent_reputation`, its row joined in the bids query) cost the list anything?

    .venv/bin/python scripts/testenv.py -- .venv/bin/python -m bench.bids --bids 10000

Migrates a fresh PostgreSQL database, adds one open task with `--bids` bids, each from an agent of its own,
every agent with a reputation row (scores spread 1..5), VACUUM ANALYZE, then reads the poster's first page of
20 `--reads` times per variant, interleaved:

- **through the view** (`GET /api/v1/tasks/{id}/bids`, the Django test client: authentication, the query,
  rendering), newest first and each `sort`;
- **the query and rendering alone**, with the reputation join and `agent_reputation`, and without either (the
  list as it was before reputation): the cost of the feature itself.

Prints a Markdown table; not run by `make test`.
"""

from __future__ import annotations

import argparse
import os
import statistics
import time

from bench.run import create_database

AGENTS = """
INSERT INTO tasks_market_agent (id, owner_id, name, description, endpoint_url, capabilities, signing_secret,
    previous_secret, created_at, updated_at)
SELECT gen_random_uuid(), %(owner)s, 'Agent ' || g, '', 'https://agent.invalid/hook', '[]'::jsonb, 'whsec_bench',
    '', now(), now()
FROM generate_series(1, %(count)s) g
"""

REPUTATIONS = """
INSERT INTO tasks_market_agentreputation (agent_id, completed_tasks, approved_without_revision, on_time,
    disputes_refund_full, disputes_release_full, disputes_split, rating_count, rating_weight_sum,
    rating_weighted_sum, score, updated_at)
SELECT id, n, n / 2, n / 3, 0, 0, 0, n / 2, n, 3 * n, 1 + (n %% 400) / 100.0, now()
FROM (SELECT id, (row_number() OVER (ORDER BY id))::int %% 97 AS n FROM tasks_market_agent) agents
"""

BIDS = """
INSERT INTO tasks_market_bid (id, task_id, agent_id, bidder_id, amount, currency, proposal, eta_hours, status,
    created_at, updated_at)
SELECT gen_random_uuid(), %(task)s, id, %(owner)s, (50 + (row_number() OVER (ORDER BY id)) %% 150)::numeric, 'usd',
    'A careful proposal.', 1 + (row_number() OVER (ORDER BY id))::int %% 72, 'pending',
    now() - make_interval(secs => (row_number() OVER (ORDER BY id))::int), now()
FROM tasks_market_agent
"""


def timed(read, reads: int) -> tuple[float, float]:
    samples = []
    for _ in range(reads):
        started = time.perf_counter()
        read()
        samples.append((time.perf_counter() - started) * 1000)
    samples.sort()
    return statistics.median(samples), samples[min(len(samples) - 1, int(len(samples) * 0.99))]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--bids", type=int, default=10_000)
    parser.add_argument("--reads", type=int, default=200)
    args = parser.parse_args()
    os.environ.setdefault("DJANGO_SETTINGS_MODULE", "config.settings.test")
    create_database(os.environ["DATABASE_URL"])  # testenv's server, a database of its own
    import django

    django.setup()
    from django.test.utils import setup_test_environment

    setup_test_environment()  # the test client's host (`testserver`) allowed, as under pytest-django
    from datetime import timedelta
    from decimal import Decimal

    from django.core.management import call_command
    from django.db import connection
    from django.test import Client
    from django.utils import timezone
    from rest_framework_simplejwt.tokens import AccessToken

    from accounts.models import User
    from core.api.pagination import keyset_page, render_page
    from core.models import RateLimitOverride
    from tasks_market import selectors
    from tasks_market.api.serializers import BidSerializer
    from tasks_market.models import Bid, Task

    call_command("migrate", verbosity=0)
    RateLimitOverride.objects.create(network="127.0.0.1", rule="*", limit=10_000_000, reason="bench")
    poster = User.objects.create_user(email="bench-poster@example.com", password="x-Very-long-pass-1")
    owner = User.objects.create_user(email="bench-agents@example.com", password="x-Very-long-pass-1")
    task = Task.objects.create(
        poster=poster,
        title="Competitor research report",
        description="Analyse five competitors.",
        budget_amount=Decimal(200),
        budget_currency="usd",
        deadline=timezone.now() + timedelta(days=10),
        category="research",
    )
    started = time.monotonic()
    with connection.cursor() as cursor:
        cursor.execute(AGENTS, {"owner": owner.pk, "count": args.bids})
        cursor.execute(REPUTATIONS, {})  # with parameters, so that `%%` is read as `%` in each statement
        cursor.execute(BIDS, {"task": task.pk, "owner": owner.pk})
    with connection.cursor() as cursor:
        for table in ("tasks_market_agent", "tasks_market_agentreputation", "tasks_market_bid"):
            cursor.execute(f"VACUUM ANALYZE {table}")
    print(f"loaded {Bid.objects.filter(task=task).count():,} bids in {time.monotonic() - started:.0f} s")

    client = Client(HTTP_AUTHORIZATION=f"Bearer {AccessToken.for_user(poster)}")
    url = f"/api/v1/tasks/{task.pk}/bids?limit=20"

    class WithoutReputation(BidSerializer):
        class Meta(BidSerializer.Meta):
            fields = [name for name in BidSerializer.Meta.fields if name != "agent_reputation"]

    def view(query: str):
        def read():
            response = client.get(url + query, secure=True)
            assert response.status_code == 200, response.content
            assert len(response.json()["items"]) == 20

        return read

    def alone(with_reputation: bool):
        def read():
            queryset = selectors.bids_for(poster, task)
            serializer = BidSerializer
            if not with_reputation:
                queryset = queryset.select_related(None).select_related("agent", "judgement")
                serializer = WithoutReputation
            rows, total, has_more, next_cursor = keyset_page(queryset, limit=20, offset=0, cursor=None)
            render_page(serializer, rows, total, has_more, next_cursor=next_cursor)

        return read

    variants = {
        "view, newest first": view(""),
        "view, sort=reputation": view("&sort=reputation"),
        "view, sort=amount": view("&sort=amount"),
        "view, sort=eta": view("&sort=eta"),
        "query + render, with agent_reputation": alone(True),
        "query + render, without (as before reputation)": alone(False),
    }
    for read in variants.values():  # warm: compiled queries, connections
        for _ in range(5):
            read()
    results: dict[str, list[tuple[float, float]]] = {name: [] for name in variants}
    for _ in range(5):  # interleaved rounds; the median round is kept
        for name, read in variants.items():
            results[name].append(timed(read, args.reads // 5))

    print(f"\n{args.bids:,} bids on one task, first page of 20, {args.reads} reads each\n")
    print("| read | p50 | p99 |\n|---|---:|---:|")
    for name, rounds in results.items():
        p50 = statistics.median(r[0] for r in rounds)
        p99 = statistics.median(r[1] for r in rounds)
        print(f"| {name} | {p50:.2f} ms | {p99:.2f} ms |")
    with_p50 = statistics.median(r[0] for r in results["query + render, with agent_reputation"])
    without_p50 = statistics.median(r[0] for r in results["query + render, without (as before reputation)"])
    print(f"\nwith / without reputation, p50: {with_p50 / without_p50:.3f}")


if __name__ == "__main__":
    main()
