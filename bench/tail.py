"""Where the open list's tail comes from: the server alone, one gunicorn setting after another, the client's
latency (wrk) beside the server's own time of each request (gunicorn's access log, `duration_ms`).

    .venv/bin/python scripts/testenv.py -- .venv/bin/python -m bench.tail 2x16 2x16:gthread 2x16:running=2 2x1 \
        [--rounds 2] [--duration 8] [--writes 20] [--page-counts]

A setting is WORKERSxTHREADS (config/gunicorn.py's default worker, config/gunicorn_workers.py: connections spread, a
worker's requests one at a time in turn), then `:gthread` for gunicorn's own gthread worker, `:running=N` for the
default worker's GUNICORN_RUNNING (0: every thread at once), `:conf=PATH` for another gunicorn configuration file
and `:env=NAME=VALUE` for the server's environment (`:env=GUNICORN_ACCESS_LOG=0` leaves the server's own times out).
`--path` measures another URL. Production settings, seed_demo --scale 4, the rate limit lifted for 127.0.0.1 (still
counted), wrk 2 threads x 32 connections; every setting's server is started once and warmed up (`--warmup` seconds
of wrk), then the settings are measured in turn, round after round, and the medians of the rounds close the table;
CPU per request is the server's process group's (user + system). `--writes N` inserts N new open tasks a second
while wrk runs (bench/compare_writes.py's INSERT); `--page-counts` turns the metrics on and adds the kept pages'
hits, joined reads, misses and moved reads of each round (core.db.pagecache); `--growth N` then adds N open tasks
in bulk with the servers running (as the peer's `compare.sh --growth`) and measures the rounds again at once
(`--settle`: once the kernel has written the load out).
bench/RESULTS.md ("where the tail comes from") has the runs. Not run by `make test`.
"""

from __future__ import annotations

import argparse
import contextlib
import json
import os
import signal
import statistics
import subprocess
import tempfile
import threading
import time
from pathlib import Path

from bench import run as bench

PATH = "/api/v1/tasks?scope=open"


def setting_env(setting: str) -> dict[str, str]:
    shape, *options = setting.split(":")
    workers, threads = shape.split("x")
    env = {"WEB_CONCURRENCY": workers, "GUNICORN_THREADS": threads}
    for option in options:
        if option == "gthread":
            env["GUNICORN_WORKER_CLASS"] = "gthread"
        elif option.startswith("running="):
            env["GUNICORN_RUNNING"] = option.split("=", 1)[1]
        elif option.startswith("conf="):  # another gunicorn configuration file, e.g. one that execs ours
            env["BENCH_TAIL_CONF"] = option.split("=", 1)[1]
        elif option.startswith("env="):  # NAME=VALUE for the server's environment
            name, _, value = option.split("=", 1)[1].partition("=")
            env[name] = value
        else:
            raise SystemExit(f"unknown option {option!r} in {setting!r}")
    return env


def start_server(setting: str, env: dict[str, str], workdir: Path, count_pages: bool):
    """The gunicorn of `setting` on a port of its own, its access log in `workdir`: (process, base URL, log,
    metrics directory)."""
    port = bench.free_port()
    name = setting.replace(":", "_").replace("/", "_")
    server_env = {
        **env,
        "GUNICORN_ACCESS_LOG": "1",  # the server's own times; `:env=GUNICORN_ACCESS_LOG=0` measures without
        **setting_env(setting),
        "GUNICORN_BIND": f"127.0.0.1:{port}",
        "LOG_LEVEL": "INFO",
    }
    metrics_dir = workdir / f"metrics-{name}"
    if count_pages:
        metrics_dir.mkdir()
        server_env["PROMETHEUS_MULTIPROC_DIR"] = str(metrics_dir)
    command = bench.server_command("gunicorn", "")  # what `make serve` runs, unless the setting names a config
    if conf := server_env.pop("BENCH_TAIL_CONF", None):
        command[command.index("config/gunicorn.py")] = conf
    log = workdir / f"{name}.log"
    with log.open("w") as out:
        process = subprocess.Popen(  # noqa: S603
            command, env=server_env, stdout=out, stderr=subprocess.STDOUT, start_new_session=True
        )
    return process, f"http://127.0.0.1:{port}", log, metrics_dir


def server_times(log: Path, skip: int) -> list[float]:
    times = []
    with log.open() as lines:
        for number, line in enumerate(lines):
            if number >= skip and '"duration_ms"' in line:
                with contextlib.suppress(ValueError, KeyError):
                    times.append(float(json.loads(line)["duration_ms"]))
    return sorted(times)


def percentile(times: list[float], share: float) -> float:
    return times[min(len(times) - 1, int(len(times) * share))] if times else float("nan")


def wrk(url: str, headers: list[str], seconds: int) -> str:
    command = ["wrk", "-t2", "-c32", f"-d{seconds}s", "--latency", *headers, url]
    return subprocess.run(command, capture_output=True, text=True, check=True).stdout  # noqa: S603


class Writer(threading.Thread):
    """`rate` new open tasks a second into the database until stopped."""

    def __init__(self, rate: float):
        super().__init__(daemon=True)
        self.rate, self.written, self.stopped = rate, 0, threading.Event()

    def run(self) -> None:
        import psycopg

        from bench.compare_writes import insert_statement

        with psycopg.connect(os.environ["DATABASE_URL"], autocommit=True) as conn:
            insert, started = insert_statement(conn), time.monotonic()
            while not self.stopped.is_set():
                conn.execute(insert)
                self.written += 1
                self.stopped.wait(max(0.0, started + self.written / self.rate - time.monotonic()))


def page_counts(directory: Path) -> dict[str, float]:
    """The open list's kept-page results summed over a server's processes (core.ops.metrics.PAGE_CACHE)."""
    from prometheus_client import CollectorRegistry, multiprocess

    registry = CollectorRegistry()
    multiprocess.MultiProcessCollector(registry, path=str(directory))
    counts: dict[str, float] = {}
    for family in registry.collect():
        for sample in family.samples:
            if sample.name == "page_cache_total" and sample.labels.get("list") == "tasks.open":
                counts[sample.labels["result"]] = counts.get(sample.labels["result"], 0) + sample.value
    return counts


def measure(server, args, headers: list[str]) -> tuple[dict[str, float], str]:
    """One round of wrk on one server (with the writer beside it when asked): the client's figures and the
    rest of the table's row."""
    process, base, log, metrics_dir = server
    writer = Writer(args.writes) if args.writes else None
    if writer:
        writer.start()
    try:
        skip = sum(1 for _ in log.open())
        before = page_counts(metrics_dir) if args.page_counts else {}
        cpu = bench.group_cpu_seconds(process.pid)
        output = wrk(base + args.path, headers, args.duration)
        cpu = bench.group_cpu_seconds(process.pid) - cpu
        after = page_counts(metrics_dir) if args.page_counts else {}
    finally:
        if writer:
            writer.stopped.set()
            writer.join(10)
    client = bench.parse_wrk(output)
    client["cpu_ms"] = 1000 * cpu / max(1, client["rps"] * args.duration)
    times = server_times(log, skip)
    server_p50, server_p99 = percentile(times, 0.5), percentile(times, 0.99)
    counts = " / ".join(f"{after.get(r, 0) - before.get(r, 0):.0f}" for r in ("hit", "joined", "miss", "moved"))
    line = (
        f"{client['rps']:.0f} | {client['p50']:.1f} ms | {client['p99']:.1f} ms | {client['p99'] / client['p50']:.1f} "
        f"| {server_p50:.1f} ms | {server_p99:.1f} ms | {client['cpu_ms']:.2f} ms |"
        + (f" {counts} |" if args.page_counts else "")
    )
    return client, line


def writeback() -> str:
    """The machine's dirty memory and memory being written back (/proc/meminfo): a bulk load's pages that the
    kernel has yet to write, which compete with the servers for the disk and the cores."""
    with open("/proc/meminfo") as meminfo:
        kib = {
            line.split(":")[0]: int(line.split()[1]) for line in meminfo if line.startswith(("Dirty:", "Writeback:"))
        }
    return f"{kib['Dirty'] // 1024} MB dirty, {kib['Writeback'] // 1024} MB being written back"


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("settings", nargs="+")
    parser.add_argument("--rounds", type=int, default=2)
    parser.add_argument("--duration", type=int, default=8)
    parser.add_argument("--warmup", type=int, default=3, help="seconds of wrk on each server before the rounds")
    parser.add_argument("--writes", type=float, default=0, help="new open tasks a second while wrk runs")
    parser.add_argument("--page-counts", action="store_true", help="count the kept pages' hits and misses")
    parser.add_argument("--path", default=PATH, help=f"the URL measured (default {PATH})")
    parser.add_argument(
        "--growth", type=int, default=0, help="then add this many open tasks in bulk and measure the rounds again"
    )
    parser.add_argument("--settle", action="store_true", help="after the load, sync before the rounds")
    args = parser.parse_args()

    env = {**os.environ, **bench.django_env("config.settings.production"), "JWT_ACCESS_MINUTES": "120"}
    os.environ.update(env)
    bench.seed_database(env, 4)
    import django

    django.setup()
    from rest_framework_simplejwt.tokens import RefreshToken

    from accounts.management.commands.ensure_demo_user import DEMO_EMAIL
    from accounts.models import User
    from core.models import RateLimitOverride

    RateLimitOverride.objects.get_or_create(
        network="127.0.0.1/32", rule="*", defaults={"limit": 10**9, "reason": "bench.tail: lift the cap, keep counting"}
    )
    token = str(RefreshToken.for_user(User.objects.get(email=DEMO_EMAIL)).access_token)
    from django.db import connections

    connections.close_all()
    headers = ["-H", "X-Forwarded-Proto: https", "-H", f"Authorization: Bearer {token}"]
    workdir = Path(tempfile.mkdtemp(prefix="bench-tail-"))
    counted = " hits / joined / misses / moved |" if args.page_counts else ""
    print(
        f"| setting | round | requests/s | client p50 | client p99 | p99 / p50 | server p50 | server p99 "
        f"| CPU per request |{counted}"
    )
    print("|---|---:|---:|---:|---:|---:|---:|---:|---:|" + ("---:|" if counted else ""))
    servers = {}  # setting: (process, base URL, log, metrics directory)
    try:
        for setting in args.settings:
            servers[setting] = start_server(setting, env, workdir, args.page_counts)
        for _process, base, _log, _metrics in servers.values():
            bench.wait_for(base + "/health?probe=live")
            wrk(base + args.path, headers, args.warmup)
        phases = ["", "grown "] if args.growth else [""]
        rounds: dict[str, list[dict[str, float]]] = {phase + s: [] for phase in phases for s in args.settings}
        for phase in phases:
            if phase:  # the same servers, no warm-up: the first rounds after the load are the point
                print(f"| adding {args.growth:,} open tasks in bulk | | | | | | | | |", flush=True)
                bench.add_open_tasks(args.growth)  # as the peer's `compare.sh --growth` loads them
                if args.settle:  # the kernel writes the load out first: what remains is the servers' own
                    started = time.monotonic()
                    os.sync()
                    print(f"| (written out in {time.monotonic() - started:.1f} s) | | | | | | | | |", flush=True)
                print(f"| ({writeback()}) | | | | | | | | |", flush=True)
            for round_number in range(1, args.rounds + 1):
                for setting, server in servers.items():
                    client, line = measure(server, args, headers)
                    rounds[phase + setting].append(client)
                    print(f"| {phase}{setting} | {round_number} | {line}", flush=True)
                if phase:  # what the kernel still has to write of the load when the round ends
                    print(f"| ({writeback()}) | | | | | | | | |", flush=True)
    finally:
        for process, *_rest in servers.values():
            os.killpg(process.pid, signal.SIGTERM)
            process.wait(30)
    print("\n| setting | median requests/s | median p50 | median p99 | median CPU per request | each round |")
    print("|---|---:|---:|---:|---:|---|")
    for setting, results in rounds.items():
        median = {key: statistics.median(r[key] for r in results) for key in ("rps", "p50", "p99", "cpu_ms")}
        each = ", ".join(f"{result['rps']:.0f}/s {result['p99']:.0f} ms" for result in results)
        print(
            f"| {setting} | {median['rps']:.0f} | {median['p50']:.1f} ms | {median['p99']:.1f} ms "
            f"| {median['cpu_ms']:.2f} ms | {each} |"
        )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
