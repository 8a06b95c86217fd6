"""The task search in process, at size (docs/decisions.md#task-search): p50 and p99 of each kind of search of
the open list, read from the database every time (its kept pages cleared before each read, as under writes).

    .venv/bin/python scripts/testenv.py -- .venv/bin/python -m bench.search --tasks 1000000

Migrates a fresh PostgreSQL database, adds `--tasks` open tasks in bulk SQL (seven categories, four
currencies, budgets 20..5,000, deadlines 1..90 days out, seven titles and four descriptions), VACUUM
ANALYZE, then reads each search `--reads` times. Prints a Markdown table; not run by `make test`.
"""

from __future__ import annotations

import argparse
import os
import statistics
import time
from decimal import Decimal

from bench.run import create_database

SEARCHES = {
    "text, one word in a seventh of the titles": {"q": "pipeline"},
    "text, two words in a quarter of the descriptions": {"q": "onboarding customers"},
    "text, by relevance": {"q": "competitor pricing", "sort": "relevance"},
    "category + budget (exact total)": {
        "category": ["research", "content"],
        "min_budget": Decimal(50),
        "max_budget": Decimal(500),
    },
    "category only (kept total)": {"category": ["research"]},
    "currency, by budget": {"currency": "eur", "sort": "budget"},
    "deadline window, by deadline": {"deadline_after": "+10 days", "deadline_before": "+20 days", "sort": "deadline"},
}

LOAD = """
INSERT INTO tasks_market_task (id, poster_id, title, description, budget_amount, budget_currency, deadline, category,
    requirements, status, created_at, updated_at)
SELECT gen_random_uuid(), %(poster)s,
    (ARRAY['Competitor research report', 'Landing page copy', 'Logo redesign', 'Data pipeline cleanup',
           'Market survey design', 'Product launch email', 'Brand voice guide'])[1 + g %% 7] || ' ' || g,
    (ARRAY['Analyse the pricing pages of five competitors.', 'Three variants of persuasive copy.',
           'Interview customers about onboarding.', 'Deduplicate the customer table.'])[1 + (g / 7) %% 4],
    (20 + (g::bigint * 7919) %% 4980)::numeric, (ARRAY['usd', 'usd', 'eur', 'gbp'])[1 + g %% 4],
    now() + make_interval(days => 1 + (g %% 90)),
    (ARRAY['content', 'design', 'research', 'development', 'data', 'marketing', 'other'])[1 + (g / 3) %% 7],
    '[]'::jsonb, 'open', now() - make_interval(secs => g), now()
FROM generate_series(1, %(count)s) g
"""


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--tasks", type=int, default=100_000)
    parser.add_argument("--reads", type=int, default=40)
    args = parser.parse_args()
    os.environ.setdefault("DJANGO_SETTINGS_MODULE", "config.settings.test")
    create_database(os.environ["DATABASE_URL"])  # testenv's server, a database of its own
    import django

    django.setup()
    from datetime import timedelta

    from django.core.management import call_command
    from django.db import connection
    from django.utils import timezone

    from accounts.models import User
    from tasks_market.selectors.task_search import SEARCH_PAGES, task_search_read

    call_command("migrate", verbosity=0)
    poster = User.objects.create_user(email="bench-search@example.com", password="x-Very-long-pass-1")
    reader = User.objects.create_user(email="bench-reader@example.com", password="x-Very-long-pass-1")
    started = time.monotonic()
    with connection.cursor() as cursor:
        cursor.execute(LOAD, {"poster": poster.pk, "count": args.tasks})
    with connection.cursor() as cursor:
        cursor.execute("VACUUM ANALYZE tasks_market_task")
    print(f"loaded {args.tasks:,} open tasks in {time.monotonic() - started:.0f} s")

    now = timezone.now()
    rows = [
        f"| search ({args.tasks:,} open tasks, {args.reads} reads) | p50 | p99 | total | exact |",
        "|---|---:|---:|---:|:-:|",
    ]
    for label, search in SEARCHES.items():
        search = {
            k: (now + timedelta(days=int(v.split()[0]))) if isinstance(v, str) and v.startswith("+") else v
            for k, v in search.items()
        }
        times, read = [], None
        for _ in range(args.reads):
            SEARCH_PAGES.clear()
            began = time.perf_counter()
            read = task_search_read(reader, scope="open", status=None, search=search, cursor=None, limit=20, offset=0)
            times.append((time.perf_counter() - began) * 1000)
        times.sort()
        p99 = times[min(len(times) - 1, int(len(times) * 0.99))]
        exact = "yes" if read.exact else "no"
        rows.append(f"| {label} | {statistics.median(times):.1f} ms | {p99:.1f} ms | {read.page.total:,} | {exact} |")
    print("\n".join(rows))


if __name__ == "__main__":
    main()
