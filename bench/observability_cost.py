"""What metrics, traces and error reports cost, in process: CPU time per request, per SQL statement, per cache call.

    .venv/bin/python scripts/testenv.py -- .venv/bin/python bench/observability_cost.py [--requests 3000]

Each variant runs in a fresh process (prometheus-client picks its multiprocess mode at import, OpenTelemetry
and Sentry patch process-wide) on the settings `make bench` uses, against scripts/testenv.py's PostgreSQL and
Redis, and times in CPU seconds (time.process_time, so other work on the machine hardly moves it):

- the floor request (GET /bench/bare/hello) through the WSGI handler and every production middleware;
- `SELECT 1` through Django's connection; `cache.get` on the Redis cache.

Variants: `off` (nothing set: the production default), `prometheus-client` (core.ops.metrics, multiprocess mode,
as `make serve` runs it with METRICS_PORT), `django-prometheus` (its before/after middleware and PostgreSQL
backend, multiprocess mode; its cache backends need django-redis), `otel` (OTEL_EXPORTER_OTLP_ENDPOINT set;
the batch exporter's delay is longer than the run, so this is the instrumentation alone), `sentry` (SENTRY_DSN
set). The figures are in docs/operations.md#metrics-and-traces.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from bench.profile import call  # noqa: E402
from bench.run import create_database, django_env  # noqa: E402

VARIANTS = ("off", "prometheus-client", "django-prometheus", "otel", "sentry")


def cpu_per_call(function, count: int, rounds: int = 3) -> float:
    """Microseconds of CPU per call, the best of `rounds` (after a warm-up)."""
    for _ in range(min(200, count)):
        function()
    best = []
    for _ in range(rounds):
        start = time.process_time()
        for _ in range(count):
            function()
        best.append((time.process_time() - start) / count * 1e6)
    return min(best)


def child(variant: str, requests: int) -> dict[str, float]:
    multiproc = tempfile.mkdtemp(prefix="metrics-cost-")
    if variant in ("prometheus-client", "django-prometheus"):
        os.environ["PROMETHEUS_MULTIPROC_DIR"] = multiproc
    if variant == "django-prometheus":
        from core.ops import metrics

        metrics.ENABLED = False  # core.ops.metrics stays off (no middleware, no timings): django-prometheus alone
    if variant == "otel":
        os.environ.update(OTEL_EXPORTER_OTLP_ENDPOINT="http://127.0.0.1:9", OTEL_BSP_SCHEDULE_DELAY="600000")
    if variant == "sentry":
        os.environ["SENTRY_DSN"] = "http://key@127.0.0.1:9/1"

    import django
    from django.conf import settings

    if variant == "django-prometheus":
        settings.MIDDLEWARE = [
            "django_prometheus.middleware.PrometheusBeforeMiddleware",
            *(name for name in settings.MIDDLEWARE if name != "core.ops.metrics.MetricsMiddleware"),
            "django_prometheus.middleware.PrometheusAfterMiddleware",
        ]
        settings.DATABASES["default"]["ENGINE"] = "django_prometheus.db.backends.postgresql"
        # Its Redis cache backends import django-redis (not a dependency here) and count hits and misses, not
        # time: Django's own backend stays, so its cache figure is the uninstrumented one.
    django.setup()
    from django.core.cache import cache
    from django.core.wsgi import get_wsgi_application
    from django.db import connection

    app = get_wsgi_application()
    timed = "core.ops.metrics.MetricsMiddleware" in settings.MIDDLEWARE
    assert timed == (variant == "prometheus-client"), settings.MIDDLEWARE
    status, body = call(app, "/bench/bare/hello", None)
    assert status.startswith("200"), (status, body[:300])

    def select_one():
        with connection.cursor() as cursor:
            cursor.execute("SELECT 1")

    return {
        "request_us": cpu_per_call(lambda: call(app, "/bench/bare/hello", None), requests),
        "query_us": cpu_per_call(select_one, requests),
        "cache_us": cpu_per_call(lambda: cache.get("observability-cost"), requests),
    }


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--requests", type=int, default=3000, help="timed calls per round (3 rounds, best kept)")
    parser.add_argument("--variant", choices=VARIANTS, help=argparse.SUPPRESS)  # the child process
    args = parser.parse_args()
    if args.variant:
        print("RESULT " + json.dumps(child(args.variant, args.requests)), flush=True)
        return 0
    for name in ("DATABASE_URL", "REDIS_URL"):
        if not os.environ.get(name):
            raise SystemExit(f"{name} is not set: run this under scripts/testenv.py")
    create_database(os.environ["DATABASE_URL"])
    env = {**os.environ, **django_env("bench.settings"), "LOG_LEVEL": "WARNING"}
    for name in ("PROMETHEUS_MULTIPROC_DIR", "OTEL_EXPORTER_OTLP_ENDPOINT", "SENTRY_DSN"):
        env.pop(name, None)
    results = {}
    for variant in VARIANTS:
        out = subprocess.run(  # noqa: S603
            [sys.executable, __file__, "--variant", variant, "--requests", str(args.requests)],
            cwd=ROOT,
            env=env,
            capture_output=True,
            text=True,
            check=False,
        )
        line = [x for x in out.stdout.splitlines() if x.startswith("RESULT ")]
        if out.returncode or not line:
            raise SystemExit(f"{variant} failed:\n{out.stdout[-2000:]}\n{out.stderr[-3000:]}")
        results[variant] = json.loads(line[0].removeprefix("RESULT "))
    off = results["off"]
    print("| variant | CPU per request | vs off | per SQL statement | vs off | per cache.get | vs off |")
    print("|---|---:|---:|---:|---:|---:|---:|")
    for variant, r in results.items():
        print(
            f"| {variant} | {r['request_us']:.0f} µs | {r['request_us'] - off['request_us']:+.0f} µs | "
            f"{r['query_us']:.1f} µs | {r['query_us'] - off['query_us']:+.1f} µs | "
            f"{r['cache_us']:.1f} µs | {r['cache_us'] - off['cache_us']:+.1f} µs |"
        )
    print(f"(median of the variants' floor: {statistics.median(r['request_us'] for r in results.values()):.0f} µs)")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
