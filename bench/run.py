"""`make bench`: the production server under load from wrk, against its own floor.

    make bench BENCH_ARGS="--scale 4 --duration 8 --rounds 3"
    .venv/bin/python scripts/testenv.py -- .venv/bin/python bench/run.py [--only c,c0] [--server granian] [--no-write]

On the throw-away PostgreSQL and Redis that scripts/testenv.py starts, this migrates, seeds
(`manage.py seed_demo --scale N`), records a rate-limit override for 127.0.0.1 (the counters are
still taken on every request: only the cap is lifted, so the load is not refused), starts gunicorn
exactly as `make serve` does (config/gunicorn.py, production settings plus the bench-only routes of
bench/urls.py) and drives it with wrk on loopback: 2 threads, 32 connections; after a warm-up, each
scenario runs --duration seconds in each of --rounds interleaved rounds, and its best round is kept.
The server speaks plain HTTP here as it does behind the production TLS proxy: 127.0.0.1 is the
trusted proxy and wrk sends `X-Forwarded-Proto: https`.

It prints one table (requests/s, p50, p99, ratio to the floor, the web processes' CPU per request)
and writes it to bench/RESULTS.md under "Production server under load". When the FastAPI peer is
beside the project (`../shared/peers/fastapi_tasks`, or --peer DIR), the same run then stops its
server and runs the peer's own side-by-side comparison (its compare.sh: the project's gunicorn and the
peer on the same PostgreSQL and Redis, interleaved rounds), adds each row's requests/s as a ratio to
the peer's to the table, and writes the comparison below it; when the peer is absent it says so.
--server and --settings run another server or settings module for comparison (with --only, nothing is
written). Exits non-zero only if a response under load was not 2xx or the peer's comparison failed
(a non-2xx, or JSON that differs from the peer's); a missed target is reported in the table.
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import re
import secrets
import shutil
import signal
import socket
import statistics
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
PY = sys.executable
RESULTS = ROOT / "bench" / "RESULTS.md"
PEER = ROOT.parent / "shared" / "peers" / "fastapi_tasks"  # outside the repository, beside the project
SECTION = "## Production server under load"
PROXY_HEADER = {"X-Forwarded-Proto": "https"}
CONNECTIONS, THREADS = 32, 2
SIMULATE_BODY = {
    "platform": "google",
    "current_daily_budget": 100,
    "current_metrics": {"cpc": 1.2, "ctr": 0.03, "conversion_rate": 0.04, "avg_order_value": 80},
    "budget_scenarios": [50, 100, 150, 200, 300],
}


@dataclass
class Scenario:
    key: str
    label: str
    path: str
    auth: bool = False
    body: str | None = None
    lua: str | None = None  # a wrk script, for per-request bodies
    result: dict[str, float] = field(default_factory=dict)  # the best round
    rounds: list[dict[str, float]] = field(default_factory=list)


def log(message: str) -> None:
    print(f"[bench] {message}", flush=True)


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


def manage(env: dict[str, str], *args: str) -> None:
    subprocess.run([PY, "manage.py", *args], cwd=ROOT, env=env, check=True, stdin=subprocess.DEVNULL)  # noqa: S603


def create_database(url: str) -> None:
    import psycopg

    name = url.rsplit("/", 1)[1]
    with psycopg.connect(url.rsplit("/", 1)[0] + "/postgres", autocommit=True) as conn:
        if not conn.execute("SELECT 1 FROM pg_database WHERE datname = %s", [name]).fetchone():
            conn.execute(f'CREATE DATABASE "{name}"')


def django_env(settings_module: str) -> dict[str, str]:
    """What the production settings require, with throw-away secrets; 127.0.0.1 is the trusted proxy."""
    return {
        "DJANGO_SETTINGS_MODULE": settings_module,
        "DJANGO_SECRET_KEY": secrets.token_urlsafe(50),
        "DJANGO_ALLOWED_HOSTS": "127.0.0.1,localhost",
        "PAYMENTS_WEBHOOK_SECRET": "whsec_" + secrets.token_hex(16),
        "TRUSTED_PROXIES": "127.0.0.1/32",  # as behind the production TLS proxy
    }


def seed_database(env: dict[str, str], scale: int) -> None:
    create_database(env["DATABASE_URL"])
    manage(env, "migrate", "--noinput", "-v0")
    manage(env, "seed_demo", "--scale", str(scale))


def server_command(kind: str, bind: str) -> list[str]:
    if kind == "gunicorn":  # what `make serve` runs
        return [PY, "-m", "gunicorn", "-c", "config/gunicorn.py", "config.wsgi:application"]
    # The others as many processes and threads as gunicorn's (config/gunicorn.py: one per core, 16 threads each).
    workers = os.environ.get("WEB_CONCURRENCY") or str(os.cpu_count() or 1)
    if kind == "gunicorn-sync":
        return [
            PY,
            "-m",
            "gunicorn",
            "-c",
            "config/gunicorn.py",
            "-k",
            "sync",
            "-w",
            workers,
            "config.wsgi:application",
        ]
    if kind == "granian":
        host, port = bind.rsplit(":", 1)
        return [
            *(str(Path(PY).with_name("granian")), "--interface", "wsgi", "--host", host, "--port", port),
            *("--workers", workers, "--blocking-threads", os.environ.get("GUNICORN_THREADS") or "16"),
            *("--no-ws", "config.wsgi:application"),
        ]
    raise SystemExit(f"unknown server {kind!r}")


def wait_for(url: str, timeout: float = 60) -> None:
    import httpx

    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        try:
            if httpx.get(url, headers=PROXY_HEADER, timeout=2).status_code == 200:
                return
        except httpx.HTTPError:
            pass
        time.sleep(0.3)
    raise RuntimeError(f"the server did not answer {url}")


_LATENCY = re.compile(r"^\s+(50|99)(?:\.0+)?%\s+([\d.]+)(us|ms|s)\s*$", re.M)


def parse_wrk(output: str) -> dict[str, float]:
    to_ms = {"us": 0.001, "ms": 1.0, "s": 1000.0}
    latencies = {f"p{p}": float(v) * to_ms[u] for p, v, u in _LATENCY.findall(output)}
    rps = float(re.search(r"^Requests/sec:\s+([\d.]+)", output, re.M).group(1))
    total = int(re.search(r"^\s+(\d+) requests in", output, re.M).group(1))
    bad = re.search(r"^\s+Non-2xx or 3xx responses:\s+(\d+)", output, re.M)
    errors = re.search(r"^\s+Socket errors: (.*)$", output, re.M)
    return {
        "rps": rps,
        **latencies,
        "requests": total,
        "non_2xx": int(bad.group(1)) if bad else 0,
        "socket_errors": errors.group(1) if errors else "",
    }


def group_cpu_seconds(pgid: int) -> float:
    """User + system CPU of every live process in a process group (the server and its workers)."""
    total = 0
    for stat in Path("/proc").glob("[0-9]*/stat"):
        try:
            fields = stat.read_text().rsplit(")", 1)[1].split()
        except OSError:
            continue
        if int(fields[2]) == pgid:  # fields[0] is the state; pgrp is field 5 of stat(5)
            total += int(fields[11]) + int(fields[12])
    return total / os.sysconf("SC_CLK_TCK")


def wrk(
    base: str, scenario: Scenario, headers: dict[str, str], duration: int, workdir: Path, pgid: int | None = None
) -> dict[str, float]:
    command = ["wrk", f"-t{THREADS}", f"-c{CONNECTIONS}", f"-d{duration}s", "--latency", "--timeout", "10s"]
    for name, value in headers.items():
        command += ["-H", f"{name}: {value}"]
    if scenario.lua:
        script = workdir / f"{scenario.key}.lua"
        script.write_text(scenario.lua)
        command += ["-s", str(script)]
    cpu_before = group_cpu_seconds(pgid) if pgid else 0.0
    result = subprocess.run([*command, base + scenario.path], capture_output=True, text=True, check=True)  # noqa: S603
    parsed = parse_wrk(result.stdout)
    if pgid:  # what one request costs the web processes, whatever else the machine is doing
        parsed["cpu_ms"] = (group_cpu_seconds(pgid) - cpu_before) * 1000 / max(parsed["requests"], 1)
    return parsed


def post_lua(body: str) -> str:
    return f"wrk.method = 'POST'\nwrk.body = {json.dumps(body)}\nwrk.headers['Content-Type'] = 'application/json'\n"


def webhook_lua(data_file: Path) -> str:
    """Each wrk thread walks its own share of the pre-signed events: every event id is sent once."""
    return f"""
local counter = 0
function setup(thread)
  thread:set("tid", counter)
  counter = counter + 1
end
function init(args)
  events = {{}}
  for line in io.lines("{data_file}") do
    local tab = line:find("\\t", 1, true)
    events[#events + 1] = {{line:sub(1, tab - 1), line:sub(tab + 1)}}
  end
  index = tid
end
function request()
  local event = events[(index % #events) + 1]
  index = index + {THREADS}
  return wrk.format("POST", nil, {{
    ["Content-Type"] = "application/json", ["X-Forwarded-Proto"] = "https", ["Payments-Signature"] = event[1]
  }}, event[2])
end
"""


def sign_events(path: Path, secret: str, count: int) -> None:
    from payments.signing import signature_header

    run = secrets.token_hex(4)
    now = int(time.time())
    with path.open("w") as f:
        for i in range(count):
            body = json.dumps(
                {"id": f"evt_bench_{run}_{i}", "type": "bench.ping", "created": now, "data": {"object": {"n": i}}},
                separators=(",", ":"),
            )
            f.write(f"{signature_header(body.encode(), [secret], now)}\t{body}\n")


def machine() -> dict[str, str]:
    cpu = platform.machine()
    with open("/proc/cpuinfo") as f:
        cpu = next((line.split(":", 1)[1].strip() for line in f if line.startswith("model name")), cpu)
    with open("/proc/meminfo") as f:
        kib = int(next(line.split()[1] for line in f if line.startswith("MemTotal")))
    psql = shutil.which("psql") or "psql"
    pg = subprocess.run([psql, "--version"], capture_output=True, text=True, check=False).stdout.strip()  # noqa: S603
    pg = pg.split("(PostgreSQL)", 1)[-1].strip()  # "psql (PostgreSQL) 15.18 (Debian ...)" -> "15.18 (Debian ...)"
    return {
        "cpu": f"{os.cpu_count()} x {cpu}",
        "memory": f"{kib / 1024 / 1024:.1f} GiB",
        "os": f"{platform.system()} {platform.release()}, Python {platform.python_version()}, PostgreSQL {pg}",
        "load": "{:.2f} {:.2f} {:.2f}".format(*os.getloadavg()),
    }


def cpu_ms(scenario: Scenario) -> float:
    """The median over the rounds of the web processes' CPU time per request."""
    return statistics.median(r["cpu_ms"] for r in scenario.rounds)


def render(scenarios: list[Scenario], args, info: dict[str, str], extra: list[str], peer: dict | None = None) -> str:
    floor = scenarios[0].result["rps"]
    peer_rps = peer["best"]["rps"] if peer else None
    rows = [
        "| | endpoint | requests/s | p50 | p99 | vs floor | vs peer | web CPU per request | non-2xx |",
        "|---|---|---:|---:|---:|---:|---:|---:|---:|",
    ]
    for s in scenarios:
        r = s.result
        vs_peer = f"{r['rps'] / peer_rps:.2f}" if peer_rps else "-"
        rows.append(
            f"| {s.key} | {s.label} | {r['rps']:,.0f} | {r['p50']:.1f} ms | {r['p99']:.1f} ms | "
            f"{r['rps'] / floor:.2f} | {vs_peer} | {cpu_ms(s):.2f} ms | {sum(x['non_2xx'] for x in s.rounds)} |"
        )
    date = datetime.now(UTC).strftime("%Y-%m-%d %H:%M UTC")
    return "\n".join(
        [
            SECTION,
            "",
            f"`make bench` ({date}): {args.server} on production settings, seeded with `seed_demo --scale "
            f"{args.scale}`; wrk on loopback, {THREADS} threads, {CONNECTIONS} connections. After a warm-up, "
            f"{args.rounds} interleaved rounds of {args.duration} s per row; each row shows its best round (the "
            "machine is shared with other work, which only ever slows a round down). Machine: "
            f"{info['cpu']}, {info['memory']}; {info['os']}; load average before the run {info['load']}.",
            "",
            *rows,
            "",
            *extra,
            "",
            *peer_section(peer, args),
        ]
    )


def peer_section(peer: dict | None, args) -> list[str]:
    """The side-by-side comparison with the FastAPI peer, as compare.py printed it, or why there is none."""
    lines = ["### Against the FastAPI peer (same run)", ""]
    if peer is None:
        return [*lines, f"Not run: {args.peer_note}"]
    return [
        *lines,
        "`vs peer` above: each row's requests/s (best round) over the peer's best round of the open-task list "
        f"({peer['best']['rps']:,.0f} requests/s), measured in this run right after the rows, on the same "
        "PostgreSQL and Redis. The peer's own comparison (its compare.py: the project's gunicorn and the peer in "
        f"{args.rounds} interleaved rounds of {args.duration} s; the median round is the figure to judge):",
        "",
        *peer["table"],
    ]


def run_peer(peer_dir: Path, args) -> dict:
    """The peer's compare.sh on this run's PostgreSQL and Redis (DATABASE_URL and REDIS_URL are set, so its
    scripts/testenv.py starts none of its own). Returns its table's lines and the peer's best and median rows."""
    command = [
        *("bash", str(peer_dir / "compare.sh"), "--rounds", str(args.rounds), "--duration", str(args.duration)),
        *("--warmup", "2", "--scale", str(args.scale)),
    ]
    log(f"the FastAPI peer: {' '.join(command)}")
    process = subprocess.Popen(  # noqa: S603
        command,
        cwd=ROOT,
        env={**os.environ, "PROJECT": str(ROOT)},
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        text=True,
        stdin=subprocess.DEVNULL,
    )
    output = []
    for line in process.stdout:
        output.append(line)
        if line.startswith("[compare]"):  # its progress, as it goes (pip's chatter on the first run is not shown)
            print(line, end="", flush=True)
    stdout = "".join(output)
    table = stdout.split("\n\nGET ", 1)
    if len(table) != 2:
        raise RuntimeError(f"the peer's comparison failed ({process.wait()}):\n{stdout[-4000:]}")
    lines = ("GET " + table[1]).strip().splitlines()
    rows = {}
    for line in lines:
        cells = [c.strip() for c in line.strip("|").split("|")]
        if len(cells) == 7 and cells[0].startswith(("peer:", "project:")) and cells[1] in ("best", "median"):
            rows[(cells[0].split(":")[0], cells[1])] = {
                "rps": float(cells[2].replace(",", "")),
                "p50": float(cells[3].removesuffix(" ms")),
                "p99": float(cells[4].removesuffix(" ms")),
                "cpu_ms": float(cells[5].removesuffix(" ms")),
            }
    return {
        "table": lines,
        "best": rows[("peer", "best")],
        "median": rows[("peer", "median")],
        "project_median": rows[("project", "median")],
        "equal": "JSON equality" in table[1] and "EQUAL." in table[1],
        "ok": process.wait() == 0,  # compare.py: no non-2xx, JSON equal
    }


def write_results(text: str) -> None:
    current = RESULTS.read_text() if RESULTS.exists() else "# Benchmarks\n"
    pattern = re.compile(rf"^{re.escape(SECTION)}\n.*?(?=^## |\Z)", re.S | re.M)
    if pattern.search(current):
        current = pattern.sub(lambda _: text.rstrip("\n") + "\n\n", current)
    else:
        current = current.rstrip("\n") + "\n\n" + text
    RESULTS.write_text(current.rstrip("\n") + "\n")


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--scale", type=int, default=4)
    parser.add_argument("--duration", type=int, default=8, help="seconds per scenario and round")
    parser.add_argument("--rounds", type=int, default=3, help="interleaved rounds; each row shows its best round")
    parser.add_argument("--server", default="gunicorn", choices=["gunicorn", "gunicorn-sync", "granian"])
    parser.add_argument("--no-write", action="store_true", help="print only; leave RESULTS.md alone")
    parser.add_argument("--settings", default="bench.settings", help="another settings module, for comparisons")
    parser.add_argument(
        "--only", default="", help="comma-separated scenario keys (a, b, c, c0, d, e, f); a is always run"
    )
    parser.add_argument("--keep-running", action="store_true", help="leave the server up until Ctrl-C (profiling)")
    parser.add_argument(
        "--growth",
        default="100,100000,1000000",
        help="open-task counts for the growth rows (bulk SQL, as compare.py); empty: none",
    )
    parser.add_argument("--peer", default=str(PEER), help="the FastAPI peer's directory (compare.sh)")
    parser.add_argument("--no-peer", action="store_true", help="skip the comparison with the FastAPI peer")
    parser.add_argument("--no-metrics", action="store_true", help="skip the metrics cost (a second server)")
    parser.add_argument(
        "--admin-rows", type=int, default=1_000_000, help="rows per table for the admin pages, after the load (0: skip)"
    )
    args = parser.parse_args()
    peer_dir = Path(args.peer).resolve()
    args.peer_note = ""
    if args.no_peer:
        args.peer_note = "--no-peer."
    elif not (peer_dir / "compare.sh").is_file():
        args.peer_note = f"the FastAPI peer is absent ({args.peer} has no compare.sh)."
        log(f"the FastAPI peer is absent ({args.peer}): no comparison with it in this run")
    if shutil.which("wrk") is None:
        raise SystemExit("wrk is missing: `apt-get install wrk` (make bench does it)")
    for name in ("DATABASE_URL", "REDIS_URL"):
        if not os.environ.get(name):
            raise SystemExit(f"{name} is not set: run this under scripts/testenv.py (make bench)")

    port = free_port()
    env = {
        **os.environ,
        **django_env(args.settings),
        "GUNICORN_BIND": f"127.0.0.1:{port}",
        "GUNICORN_ACCESS_LOG": os.environ.get("GUNICORN_ACCESS_LOG", "0"),
        "LOG_LEVEL": os.environ.get("LOG_LEVEL", "WARNING"),
    }
    os.environ.update(env)
    os.chdir(ROOT)
    sys.path.insert(0, str(ROOT))
    log("migrate, collectstatic, seed_demo")
    seed_database(env, args.scale)
    manage(env, "collectstatic", "--noinput", "-v0")

    import django

    django.setup()
    from django.conf import settings
    from rest_framework_simplejwt.tokens import RefreshToken

    from accounts.management.commands.ensure_demo_user import DEMO_EMAIL
    from accounts.models import User
    from brands.models import Brand
    from core.http.ratelimit import forget_overrides
    from core.models import RateLimitOverride
    from demo_seed.management.commands.seed_demo import SHOWCASE_BRAND
    from tasks_market.models import Task, TaskStatus

    RateLimitOverride.objects.get_or_create(
        network="127.0.0.1/32", rule="*", defaults={"limit": 10**9, "reason": "make bench: lift the cap, keep counting"}
    )
    forget_overrides()
    demo = User.objects.get(email=DEMO_EMAIL)
    token = str(RefreshToken.for_user(demo).access_token)
    brand = Brand.objects.get(owner=demo, name=SHOWCASE_BRAND)
    open_tasks = Task.objects.filter(status=TaskStatus.OPEN).count()

    base = f"http://127.0.0.1:{port}"
    scenarios = [
        Scenario("a", "bare DRF hello view (floor)", "/bench/bare/hello"),
        Scenario("b", "GET /health", "/health"),
        Scenario(
            "c",
            f"GET /api/v1/tasks?scope=open (JWT, rate limited; {open_tasks} open)",
            "/api/v1/tasks?scope=open",
            auth=True,
        ),
        Scenario("c0", "the same list, no auth, no rate limit", "/bench/bare/tasks?scope=open"),
        Scenario(
            "d", "GET competitors roster (2,000 + 500 names)", f"/api/v1/brands/{brand.id}/competitors", auth=True
        ),
        Scenario(
            "e", "POST /api/v1/ads/simulate", "/api/v1/ads/simulate", auth=True, lua=post_lua(json.dumps(SIMULATE_BODY))
        ),
        Scenario("f", "POST /api/v1/webhooks/payments (signed, distinct ids)", "/api/v1/webhooks/payments"),
    ]

    if args.only:
        keep = {"a", *args.only.split(",")}
        scenarios = [s for s in scenarios if s.key in keep]
    info = machine()
    log(f"starting {args.server} on {base}")
    server = subprocess.Popen(  # noqa: S603
        server_command(args.server, f"127.0.0.1:{port}"), cwd=ROOT, env=env, start_new_session=True
    )
    workdir = Path(tempfile.mkdtemp(prefix="bench-"))
    try:
        wait_for(base + "/health")
        import httpx

        for s in scenarios:  # each answers as it should before it is loaded
            headers = {**PROXY_HEADER, **({"Authorization": f"Bearer {token}"} if s.auth else {})}
            if s.key == "f":
                continue
            body = SIMULATE_BODY if s.key == "e" else None
            response = httpx.request("POST" if body else "GET", base + s.path, json=body, headers=headers, timeout=30)
            if response.status_code != 200:
                raise RuntimeError(f"{s.path}: {response.status_code} {response.text[:300]}")
        if args.keep_running:
            log("server up; Ctrl-C stops it")
            server.wait()
        for s in scenarios:  # warm-up: connections, caches, the first requests of every thread
            if s.key != "f":
                headers = {**PROXY_HEADER, **({"Authorization": f"Bearer {token}"} if s.auth else {})}
                wrk(base, s, headers, 2, workdir)
        for round_number in range(1, args.rounds + 1):
            for s in scenarios:
                headers = {**PROXY_HEADER, **({"Authorization": f"Bearer {token}"} if s.auth else {})}
                if s.key == "f":  # signed right before its run: the signature tolerance is 300 s
                    events = workdir / "events.tsv"
                    sign_events(events, settings.PAYMENTS_WEBHOOK_SECRET[0], count=max(20000, 3000 * args.duration))
                    s.lua = webhook_lua(events)
                result = wrk(base, s, headers, args.duration, workdir, pgid=server.pid)
                s.rounds.append(result)
                if not s.result or result["rps"] > s.result["rps"]:
                    s.result = result
                log(
                    f"round {round_number}, {s.key}: {result['rps']:.0f} req/s, p50 {result['p50']:.1f} ms, "
                    f"p99 {result['p99']:.1f} ms, web CPU {result['cpu_ms']:.2f} ms/request, "
                    f"non-2xx {result['non_2xx']}"
                )
        metrics = [] if args.no_metrics else metrics_cost(base, server.pid, env, scenarios, args, workdir)
        peer = None  # before the growth rows, which leave a million open tasks: the peer runs on the seeded list
        if not args.peer_note and any(s.key == "c" for s in scenarios):
            peer = run_peer(peer_dir, args)
        elif not args.peer_note:
            args.peer_note = "the open-task list (c) was not among the rows."
        growth_lines = growth_rows(
            base, {**PROXY_HEADER, "Authorization": f"Bearer {token}"}, args, workdir, server.pid
        )
    finally:
        os.killpg(server.pid, signal.SIGTERM)
        try:
            server.wait(timeout=30)
        except subprocess.TimeoutExpired:
            os.killpg(server.pid, signal.SIGKILL)
        shutil.rmtree(workdir, ignore_errors=True)

    extra, met = targets({s.key: s for s in scenarios}, peer)
    extra = [*growth_lines, *extra, *metrics]
    if args.admin_rows:  # last: the million rows would change what the load scenarios read
        extra += ["", *admin_rows(args.admin_rows)]
    text = render(scenarios, args, info, extra, peer)
    print()
    print(text)
    if not args.no_write and not args.only:
        write_results(text)
        log(f"written to {RESULTS.relative_to(ROOT)}")
    if not met:
        log("a target was missed: see the profile in bench/RESULTS.md")
    bad = [s.key for s in scenarios if any(r["non_2xx"] for r in s.rounds)]
    if bad:  # a wrong answer under load is a failure; a missed target is a finding
        log(f"non-2xx responses under load in: {', '.join(bad)}")
    if peer and not peer["ok"]:
        log("the peer's comparison failed: non-2xx responses, or JSON that differs (see its lines above)")
        bad.append("peer")
    return 1 if bad else 0


def add_open_tasks(count: int) -> None:
    """`count` copies of one open task, each older than the last (as the peer's compare.py), then ANALYZE.
    The kept open count follows through its trigger (core.db.counters)."""
    import psycopg

    if count <= 0:
        return
    with psycopg.connect(os.environ["DATABASE_URL"], autocommit=True) as conn:
        cols = [d.name for d in conn.execute("SELECT * FROM tasks_market_task LIMIT 0").description]
        fresh = {
            "id": "gen_random_uuid()",
            "created_at": "t.created_at - g * interval '1 second'",
            "updated_at": "t.created_at - g * interval '1 second'",
        }
        select = ", ".join(fresh.get(c, f"t.{c}") for c in cols)
        conn.execute(
            f"INSERT INTO tasks_market_task ({', '.join(cols)}) SELECT {select} FROM generate_series(1, %s) g, "  # noqa: S608
            "(SELECT * FROM tasks_market_task WHERE status = 'open' ORDER BY created_at LIMIT 1) t",
            (count,),
        )
        conn.execute("VACUUM ANALYZE tasks_market_task")


def deep_cursor(depth: int) -> str | None:
    """The open list's cursor after its first `depth` rows, as a client walking there would hold it."""
    from core.api.pagination import encode_cursor
    from tasks_market.models import Task, TaskStatus
    from tasks_market.selectors.task_list import ORDER

    row = (
        Task.objects.filter(status=TaskStatus.OPEN)
        .order_by("-created_at", "-id")
        .values("created_at", "id")[depth - 1 : depth]
        .first()
    )
    return encode_cursor(row, ORDER) if row else None


def growth_rows(base: str, headers: dict[str, str], args, workdir: Path, pgid: int) -> list[str]:
    """The open list's first page, and a page 50,000 rows deep by cursor, at each `--growth` size of the
    open list (docs/decisions.md#lists): the cost must not grow with the table."""
    from tasks_market.models import Task, TaskStatus

    sizes = [int(n) for n in args.growth.split(",") if n.strip()]
    if not sizes:
        return []
    lines = [
        "Growth of the open-task list (JWT, rate limited; best of "
        f"{args.rounds} rounds of {args.duration} s; open tasks added in bulk SQL):",
        "",
        "| open tasks | page | requests/s | p50 | p99 | web CPU per request | non-2xx |",
        "|---:|---|---:|---:|---:|---:|---:|",
    ]
    for size in sizes:
        add_open_tasks(size - Task.objects.filter(status=TaskStatus.OPEN).count())
        pages = [Scenario("g1", "first", "/api/v1/tasks?scope=open", auth=True)]
        cursor = deep_cursor(50_000)
        if cursor:
            pages.append(
                Scenario("g2", "50,000 deep by cursor", f"/api/v1/tasks?scope=open&cursor={cursor}", auth=True)
            )
        for s in pages:
            wrk(base, s, headers, 2, workdir)
            for _ in range(args.rounds):
                result = wrk(base, s, headers, args.duration, workdir, pgid=pgid)
                s.rounds.append(result)
                if not s.result or result["rps"] > s.result["rps"]:
                    s.result = result
            r = s.result
            log(f"growth {size:,} open, {s.label}: {r['rps']:.0f} req/s, p50 {r['p50']:.1f} ms, p99 {r['p99']:.1f} ms")
            lines.append(
                f"| {size:,} | {s.label} | {r['rps']:,.0f} | {r['p50']:.1f} ms | {r['p99']:.1f} ms | "
                f"{r.get('cpu_ms', 0):.2f} ms | {sum(x['non_2xx'] for x in s.rounds)} |"
            )
    return [*lines, ""]


# --- What metrics cost per request (docs/operations.md#metrics-and-traces) --------------------------------------


def metrics_cost(base: str, pgid: int, env: dict, scenarios: list[Scenario], args, workdir: Path) -> list[str]:
    """The floor (a) and /health (b) on this server (metrics off) and on a second one started as `make serve` starts
    it with METRICS_PORT (core.ops.metrics on, multiprocess), in interleaved rounds; and one scrape of its exporter."""
    import httpx

    port, metrics_port = free_port(), free_port()
    multiproc = workdir / "metrics"
    multiproc.mkdir()
    env_on = {**env, "GUNICORN_BIND": f"127.0.0.1:{port}", "PROMETHEUS_MULTIPROC_DIR": str(multiproc)}
    env_on["METRICS_PORT"] = str(metrics_port)
    log(f"metrics cost: a second gunicorn with metrics on, on 127.0.0.1:{port}")
    server = subprocess.Popen(server_command("gunicorn", ""), cwd=ROOT, env=env_on, start_new_session=True)  # noqa: S603
    rows = [s for s in scenarios if s.key in ("a", "b")]
    runs: dict[tuple[str, bool], list[dict]] = {}
    try:
        on = f"http://127.0.0.1:{port}"
        wait_for(on + "/health")
        for s in rows:
            wrk(on, s, PROXY_HEADER, 2, workdir)  # warm-up
        for _ in range(args.rounds):
            for s in rows:
                for enabled, url, group in ((False, base, pgid), (True, on, server.pid)):
                    runs.setdefault((s.key, enabled), []).append(
                        wrk(url, s, PROXY_HEADER, args.duration, workdir, pgid=group)
                    )
        started = time.perf_counter()
        scrape = httpx.get(f"http://127.0.0.1:{metrics_port}/metrics", timeout=10)
        scrape_ms = (time.perf_counter() - started) * 1000
        samples = sum(1 for line in scrape.text.splitlines() if line and not line.startswith("#"))
    finally:
        os.killpg(server.pid, signal.SIGTERM)
        server.wait(timeout=30)
    lines = [
        "",
        "### Metrics cost per request",
        "",
        "The same server with metrics on (`METRICS_PORT`, core.ops.metrics in prometheus-client's multiprocess mode, "
        "as `make serve` runs it) against metrics off, in interleaved rounds (best round's requests/s, median CPU):",
        "",
        "| | endpoint | metrics off | metrics on | requests/s | web CPU per request |",
        "|---|---|---:|---:|---:|---:|",
    ]
    for s in rows:
        off, on_ = runs[(s.key, False)], runs[(s.key, True)]
        rps_off, rps_on = max(r["rps"] for r in off), max(r["rps"] for r in on_)
        cpu_off = statistics.median(r["cpu_ms"] for r in off)
        cpu_on = statistics.median(r["cpu_ms"] for r in on_)
        lines.append(
            f"| {s.key} | {s.label} | {rps_off:,.0f}/s, {cpu_off:.2f} ms | {rps_on:,.0f}/s, {cpu_on:.2f} ms | "
            f"{(rps_on / rps_off - 1) * 100:+.1f} % | {(cpu_on - cpu_off) * 1000:+.0f} µs |"
        )
    lines += ["", f"One scrape of the web exporter after the load: {scrape_ms:.1f} ms, {samples} samples."]
    return lines


ADMIN_PAGES = [  # each change list's first page, then one filtered page (docs/decisions.md#admin-change-lists-at-size)
    ("tasks", "/admin/tasks_market/task/", "?status__exact=completed"),
    ("bids", "/admin/tasks_market/bid/", "?status__exact=rejected"),
    ("payments", "/admin/payments/payment/", "?status__exact=succeeded"),
    ("deliveries", "/admin/tasks_market/delivery/", "?status__exact=pending"),
    ("webhook deliveries", "/admin/webhooks_app/webhookdelivery/", "?status__exact=failed"),
    ("users", "/admin/accounts/user/", "?is_active__exact=1"),
]


def clone_rows(cursor, model, template_pk, count: int, overrides: dict[str, str], source: str = "") -> None:
    """`count` copies of one row of `model`, in one INSERT ... SELECT: every column as the template's but
    the `overrides` (SQL over `n`, 1..count, and the template `t`)."""
    table = model._meta.db_table
    columns = [field.column for field in model._meta.concrete_fields]
    values = [overrides.get(column, f't."{column}"') for column in columns]
    names = ", ".join(f'"{column}"' for column in columns)
    source = source or f"generate_series(1, {int(count)}) AS n"
    cursor.execute(
        f'INSERT INTO "{table}" ({names}) SELECT {", ".join(values)} '  # noqa: S608
        f'FROM "{table}" AS t, {source} WHERE t."{model._meta.pk.column}" = %s',
        [template_pk],
    )


def admin_rows(rows: int) -> list[str]:
    """Staff pages at size: `rows` rows in each table behind a change list (bulk SQL), then the first page and a
    filtered page of each, timed through the WSGI handler as a logged-in staff user (median of 3, after one)."""
    from django.db import connection
    from django.test import Client

    from accounts.models import User
    from payments.models import Payment
    from tasks_market.models import Bid, Delivery, Task
    from webhooks_app.models import WebhookDelivery, WebhookEvent, WebhookSubscription

    ago = "now() - n * interval '1 second'"
    statuses = "(ARRAY[{}])[1 + mod(n, {})]".format
    staff = User.objects.create_superuser(email="bench-staff@example.com", password=secrets.token_urlsafe(16))
    task = Task.objects.order_by("created_at").first()
    bid = Bid.objects.filter(task=task).first() or Bid.objects.first()
    payment = Payment.objects.create(
        source=f"task:{task.pk}",
        reference=f"bid:{bid.pk}",
        payer_id=task.poster_id,
        payee_id=bid.bidder_id,
        provider="local",
        provider_payment_id="pi_bench_template",
        amount=100,
        currency="usd",
    )
    delivery = Delivery.objects.create(task=task, bid=bid, agent=bid.agent, status="pending")
    subscription = WebhookSubscription.objects.create(
        owner=staff, url="https://hooks.example.com/bench", events=["task.created"], secret=secrets.token_hex(16)
    )
    event = WebhookEvent.objects.create(owner=staff, type="task.created", body="{}")
    hook = WebhookDelivery.objects.create(event=event, subscription=subscription, message_id="msg_bench_template")
    started = time.monotonic()
    log(f"admin pages: {rows:,} rows in each of {len(ADMIN_PAGES)} tables (bulk SQL)")
    with connection.cursor() as cursor:
        gen = "gen_random_uuid()"
        clone_rows(
            cursor, User, staff.pk, rows,
            {"id": gen, "email": "'bench' || n || '@example.com'", "is_staff": "false", "is_superuser": "false",
             "date_joined": ago},
        )  # fmt: skip
        clone_rows(
            cursor, Task, task.pk, rows,
            {"id": gen, "title": "'Bench task ' || n", "created_at": ago, "selected_bid_id": "NULL",
             "status": statuses("'completed', 'cancelled', 'open'", 3)},
        )  # fmt: skip
        clone_rows(cursor, Bid, bid.pk, rows, {"id": gen, "created_at": ago, "status": "'rejected'"})
        clone_rows(
            cursor, Payment, payment.pk, rows,
            {"id": gen, "provider_payment_id": "'pi_bench_' || n", "created_at": ago,
             "status": statuses("'succeeded', 'refunded', 'requires_payment'", 3)},
        )  # fmt: skip
        clone_rows(
            cursor, Delivery, delivery.pk, rows,
            {"id": gen, "task_id": "s.task_id", "created_at": ago,
             "status": statuses("'approved', 'pending', 'failed'", 3)},
            source=f"(SELECT id AS task_id, row_number() OVER () AS n FROM \"{Task._meta.db_table}\""  # noqa: S608
            f" WHERE title LIKE 'Bench task %%' LIMIT {int(rows)}) AS s",
        )  # fmt: skip
        clone_rows(
            cursor, WebhookDelivery, hook.pk, rows,
            {"id": gen, "message_id": "'msg_bench_' || n", "created_at": ago,
             "status": statuses("'succeeded', 'failed', 'pending'", 3)},
        )  # fmt: skip
        for model in (User, Task, Bid, Payment, Delivery, WebhookDelivery):
            cursor.execute(f'ANALYZE "{model._meta.db_table}"')
    log(f"admin pages: rows in place in {time.monotonic() - started:.0f} s")

    client = Client(HTTP_HOST="127.0.0.1", HTTP_X_FORWARDED_PROTO="https")
    client.force_login(staff)
    lines = [
        f"Admin change lists with {rows:,} rows in each table (in process, as a logged-in staff user; median of 3 "
        "requests after one; target < 1 s):",
        "",
        "| change list | first page (ms) | filtered page (ms) | filter |",
        "|---|---:|---:|---|",
    ]
    slow = []
    for name, path, query in ADMIN_PAGES:
        timings = []
        for url in (path, path + query):
            times = []
            for _ in range(4):
                start = time.perf_counter()
                response = client.get(url, secure=True)
                times.append((time.perf_counter() - start) * 1000)
                if response.status_code != 200:
                    raise RuntimeError(f"{url}: {response.status_code}")
            timings.append(statistics.median(times[1:]))
        slow += [name] if max(timings) >= 1000 else []
        log(f"admin {name}: first page {timings[0]:.0f} ms, filtered {timings[1]:.0f} ms")
        lines.append(f"| {name} | {timings[0]:.0f} | {timings[1]:.0f} | `{query[1:]}` |")
    lines += ["", f"Every page under 1 s: {'met' if not slow else 'MISSED (' + ', '.join(slow) + ')'}", ""]
    return lines


def targets(by_key: dict[str, Scenario], peer: dict | None = None) -> tuple[list[str], bool]:
    """The issue's targets, as lines for RESULTS.md, and whether all were met."""
    if "c" not in by_key or "c0" not in by_key:
        return [], True
    peer_lines, met_peer = [], True
    if peer:
        project, other = peer["project_median"], peer["median"]
        ratio_rps, ratio_p99 = project["rps"] / other["rps"], project["p99"] / other["p99"]
        ratio_cpu = project["cpu_ms"] / other["cpu_ms"]
        met_peer = ratio_rps >= 1.2 and ratio_p99 <= 1 and ratio_cpu <= 1 and peer["equal"]
        peer_lines = [
            f"- (c) against the FastAPI peer (its compare.py, median rounds): requests/s ≥ 1.2 x, p99 ≤ 1 x, CPU "
            f"per request ≤ 1 x, JSON equal: {ratio_rps:.2f} x, {ratio_p99:.2f} x, {ratio_cpu:.2f} x, "
            f"{'equal' if peer['equal'] else 'DIFFERENT'} — {'met' if met_peer else 'MISSED'}",
        ]
    floor, listed, bare = by_key["a"].result, by_key["c"].result, by_key["c0"].result
    ratio = listed["rps"] / floor["rps"]
    overhead = 1 - listed["rps"] / bare["rps"]
    cpu_overhead = cpu_ms(by_key["c"]) / cpu_ms(by_key["c0"]) - 1
    met_c = ratio >= 0.5 and listed["p99"] <= 50
    met_overhead = overhead <= 0.15
    lines = [
        "Targets:",
        "",
        f"- (c) ≥ 0.5 x the floor's requests/s and p99 ≤ 50 ms: {ratio:.2f} x and {listed['p99']:.1f} ms — "
        f"{'met' if met_c else 'MISSED'}",
        f"- auth + rate limiting + error handling cost ≤ 15 % (c against c0, the same view without them): "
        f"{overhead * 100:.1f} % fewer requests/s — {'met' if met_overhead else 'MISSED'}; in web CPU per request "
        f"{cpu_overhead * 100:+.1f} %",
        *peer_lines,
        "- every list endpoint's query count is constant in the number of rows: asserted by each app's tests "
        "(`django_assert_num_queries` with 1 and 25 rows)",
        "",
        "Every response was checked once before the load; `non-2xx` counts what wrk saw under load, in all rounds. "
        "`web CPU per request` is the user + system CPU time of the gunicorn processes divided by the requests "
        "served (median of the rounds): unlike requests/s it hardly moves when other work shares the machine.",
    ]
    return lines, met_c and met_overhead and met_peer


if __name__ == "__main__":
    sys.exit(main())
