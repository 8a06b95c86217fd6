"""Benchmark: the competitors roster of a brand with 2,000 discovered rows and 500 brand-kit names.

Run on demand (not part of the test suite), against throw-away PostgreSQL and Redis:

    .venv/bin/python scripts/testenv.py -- .venv/bin/python bench/competitors.py [--runs 30] [--no-write]

It creates a test database, seeds one brand whose seed layer holds 2,000 public seeds (a few
hundred of them with the brand's copies: starred, edited, removed), plus kits naming 500
competitors (150 of them variants of discovered names that the fuzzy merge must drop), then times
`GET /api/v1/brands/{id}/competitors` through Django's test client (the whole WSGI stack:
middleware, JWT auth, rate limiting, view, JSON rendering), and writes the result to
bench/RESULTS.md under "Competitors roster". Target: under 150 ms.
"""

from __future__ import annotations

import argparse
import os
import platform
import random
import re
import statistics
import subprocess
import sys
import time
from datetime import UTC, datetime
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
os.environ.setdefault("DJANGO_SETTINGS_MODULE", "config.settings.test")

import django  # noqa: E402

django.setup()

from django.db import connection  # noqa: E402
from django.test.utils import (  # noqa: E402
    CaptureQueriesContext,
    setup_databases,
    setup_test_environment,
    teardown_databases,
    teardown_test_environment,
)

DISCOVERED = 2000
KIT_NAMES = 500
KIT_VARIANTS = 150  # kit names that duplicate a discovered row in another spelling
TARGET_MS = 150.0
RESULTS = ROOT / "bench" / "RESULTS.md"
SECTION = "## Competitors roster"

_SYLLABLES = ["ka", "lo", "mi", "ra", "ven", "tor", "ex", "ix", "ul", "an", "sor", "bel", "cor", "dan", "fi"]
_SYLLABLES += ["gra", "hel", "jo", "lum", "nar", "os", "pe", "qui", "sta", "tri", "vo", "zen"]
_SUFFIXES = ["", "", "", " Inc.", " LLC", " Ltd", " GmbH", " Corp", " Co"]
_WORDS = ["Running", "Outdoor", "Labs", "Studio", "Goods", "Athletics", "Supply", "Works", "Collective", ""]


def company_name(rnd: random.Random) -> str:
    core = "".join(rnd.choice(_SYLLABLES) for _ in range(rnd.randint(2, 3))).capitalize()
    word = rnd.choice(_WORDS)
    return f"{core} {word}".strip() + rnd.choice(_SUFFIXES)


def variant(name: str, rnd: random.Random) -> str:
    base = re.sub(r"\s+(Inc\.|LLC|Ltd|GmbH|Corp|Co)$", "", name)
    return rnd.choice([f"The {base}", base.upper(), f"{base}, Inc.", base.lower().replace(" ", "-") + ".com"])


def seed_data(rnd: random.Random):
    from accounts.models import User
    from brands.domain.matching import normalize_name
    from brands.models import Brand, BrandCompetitor, BrandKit, CompetitorSeed
    from brands.selectors.competitors import seed_row_id

    user = User.objects.create_user("bench@example.com", "bench-password-123")
    brand = Brand.objects.create(owner=user, name="Bench Brand", domain="bench.example")
    names, seen = [], set()
    while len(names) < DISCOVERED + KIT_NAMES - KIT_VARIANTS:
        name = company_name(rnd)
        if normalize_name(name) not in seen:
            seen.add(normalize_name(name))
            names.append(name)
    discovered, fresh = names[:DISCOVERED], names[DISCOVERED:]
    seeds = CompetitorSeed.objects.bulk_create(
        [
            CompetitorSeed(
                name=name,
                name_key=normalize_name(name),
                target_domain=brand.domain,
                canonical_domain=f"{normalize_name(name).replace(' ', '-')}.example",
                website_url=f"https://{normalize_name(name).replace(' ', '-')}.example/",
                description=f"{name} competes on {rnd.randint(3, 90)} shared keywords.",
                industry=rnd.choice(["apparel_fashion", "sports_outdoors", "footwear"]),
                country=rnd.choice(["US", "GB", "DE", "FR"]),
                social_links={"instagram": f"https://instagram.com/{i}", "x": f"https://x.com/{i}"},
                analysis_data={"keyword_overlap": round(rnd.random(), 3), "rank": i},
                active_paid_media_platforms=rnd.sample(["meta", "google", "tiktok", "linkedin"], k=2),
                brand_classification={
                    "primary_industry": "sports_outdoors",
                    "industries": ["sports_outdoors"],
                    "business_models": ["ecommerce"],
                    "version": "keyword-rules/1",
                    "source": "keyword_rules",
                    "classified_at": "2026-01-01T00:00:00Z",
                    "needs_review": False,
                },
            )
            for i, name in enumerate(discovered)
        ],
        batch_size=500,
    )
    copies = []
    for i, seed in enumerate(seeds[:400]):  # the brand's own differences
        copies.append(
            BrandCompetitor(
                id=seed_row_id(brand.id, seed.id),
                brand=brand,
                seed=seed,
                name=seed.name,
                is_starred=i % 4 == 0,
                removed=i % 10 == 9,
                notes="Watch pricing." if i % 3 == 0 else "",
                edited_fields=["notes"] if i % 3 == 0 else [],
            )
        )
    BrandCompetitor.objects.bulk_create(copies, batch_size=500)
    kit_names = fresh + [variant(rnd.choice(discovered), rnd) for _ in range(KIT_VARIANTS)]
    rnd.shuffle(kit_names)
    BrandKit.objects.create(owner=user, brand=brand, name="Main", competitor_names=kit_names[:300])
    BrandKit.objects.create(owner=user, brand=brand, name="Campaign", competitor_names=kit_names[300:])
    with connection.cursor() as cursor:
        # Table statistics, as autovacuum keeps them in a running database; without them the
        # planner takes these freshly filled tables for empty ones.
        cursor.execute("ANALYZE")
    return user, brand


def machine() -> str:
    cpu = platform.processor() or platform.machine()
    try:
        with open("/proc/cpuinfo") as f:
            model = next((line.split(":", 1)[1].strip() for line in f if line.startswith("model name")), "")
        cpu = model or cpu
    except OSError:
        pass
    with connection.cursor() as cursor:
        cursor.execute("SHOW server_version")
        pg = cursor.fetchone()[0]
    return (
        f"{cpu}, {os.cpu_count()} CPUs, {platform.system()} {platform.release()}, "
        f"Python {platform.python_version()}, PostgreSQL {pg}"
    )


def git_commit() -> str:
    try:
        out = subprocess.run(["git", "rev-parse", "--short", "HEAD"], capture_output=True, text=True, cwd=ROOT)  # noqa: S607
        return out.stdout.strip() or "unknown"
    except OSError:
        return "unknown"


def write_results(text: str) -> None:
    current = (
        RESULTS.read_text() if RESULTS.exists() else "# Benchmarks\n\nRun on demand; see each script's docstring.\n"
    )
    pattern = re.compile(rf"^{re.escape(SECTION)}\n.*?(?=^## |\Z)", re.S | re.M)
    found = pattern.search(current)
    current = pattern.sub(lambda _: text, current) if found else current.rstrip("\n") + "\n\n" + text
    RESULTS.write_text(current.rstrip("\n") + "\n")


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--runs", type=int, default=30)
    parser.add_argument("--no-write", action="store_true", help="print only; leave RESULTS.md alone")
    args = parser.parse_args()
    load_before = os.getloadavg()[0]

    from django.core.cache import cache

    from core.models import RateLimitOverride
    from tests.conftest import client_with_token, jwt_for

    setup_test_environment()
    old_config = setup_databases(verbosity=0, interactive=False)
    try:
        cache.clear()
        rnd = random.Random(20261121)  # noqa: S311 (reproducible data, not secrets)
        user, brand = seed_data(rnd)
        RateLimitOverride.objects.create(network="127.0.0.1", rule="*", limit=10**9, reason="bench")
        client = client_with_token(jwt_for(user))
        url = f"/api/v1/brands/{brand.id}/competitors"

        for _ in range(3):  # warm up caches, connections, imports
            assert client.get(url).status_code == 200
        with CaptureQueriesContext(connection) as ctx:
            response = client.get(url)
        queries = len(ctx.captured_queries)
        rows = response.json()
        timings = []
        for _ in range(args.runs):
            started = time.perf_counter()
            response = client.get(url)
            timings.append((time.perf_counter() - started) * 1000)
            assert response.status_code == 200
        from brands.selectors.roster_cache import roster_changed

        rebuilt = []  # each request after a write: the roster merged and rendered again
        for _ in range(args.runs):
            roster_changed(brand.id)
            started = time.perf_counter()
            response = client.get(url)
            rebuilt.append((time.perf_counter() - started) * 1000)
            assert response.status_code == 200
        rebuilt.sort()
        timings.sort()
        median = statistics.median(timings)
        p95 = timings[min(len(timings) - 1, round(0.95 * (len(timings) - 1)))]
        kit_rows = sum(1 for r in rows if r["source"] == "brand_kit")
        verdict = "meets" if statistics.median(rebuilt) < TARGET_MS else "MISSES"
        text = (
            f"{SECTION}\n\n"
            f"`GET /api/v1/brands/{{brand_id}}/competitors` with {DISCOVERED} discovered rows (400 with the brand's "
            f"copies: starred, edited, 40 removed) and {KIT_NAMES} brand-kit names ({KIT_VARIANTS} of them "
            f"spelling variants of discovered names), through Django's test client (whole WSGI stack). "
            f"`bench/competitors.py`, {args.runs} timed runs after 3 warm-up runs, tables analysed (as autovacuum "
            f"keeps them). The machine is shared with other work, so max and p95 are noisy; the median is the "
            f"figure to compare.\n\n"
            f"| | |\n|---|---|\n"
            f"| date | {datetime.now(UTC).strftime('%Y-%m-%d %H:%M UTC')} (commit {git_commit()}) |\n"
            f"| machine | {machine()} |\n"
            f"| rows returned | {len(rows)} ({len(rows) - kit_rows} discovered, {kit_rows} brand-kit) |\n"
            f"| brand-kit names kept | {kit_rows} of {KIT_NAMES}; the rest duplicate a discovered row or an earlier "
            f"kit name (the generated names are alike, so the fuzzy rule folds more than the {KIT_VARIANTS} "
            f"planted variants) |\n"
            f"| response size | {len(response.content) / 1024:.0f} KiB |\n"
            f"| SQL queries per request | {queries} |\n"
            f"| load average before the run | {load_before:.2f} |\n"
            f"| median, cached roster (no write since the last read) | {median:.1f} ms |\n"
            f"| p95 / min / max, cached | {p95:.1f} / {timings[0]:.1f} / {timings[-1]:.1f} ms |\n"
            f"| median, rebuilt (a write before each read) | {statistics.median(rebuilt):.1f} ms |\n"
            f"| min / max, rebuilt | {rebuilt[0]:.1f} / {rebuilt[-1]:.1f} ms |\n"
            f"| target | < {TARGET_MS:.0f} ms rebuilt: {verdict} |\n"
        )
        print(text)
        if not args.no_write:
            write_results(text)
        return 0 if statistics.median(rebuilt) < TARGET_MS else 1
    finally:
        teardown_databases(old_config, verbosity=0)
        teardown_test_environment()


if __name__ == "__main__":
    sys.exit(main())
