"""Where one request's time goes: the benchmark's requests, in process, through the WSGI handler.

    make profile PROFILE_ARGS="--path c --pyinstrument"
    .venv/bin/python scripts/testenv.py -- .venv/bin/python bench/profile.py [--requests 2000] [--path c]

On the throw-away PostgreSQL and Redis of scripts/testenv.py, with the settings `make bench` uses
(bench.settings: production plus the bare routes), this seeds as `make bench` does, then calls the
WSGI application directly (no server, no sockets on the web side) and prints the CPU time
(time.process_time) and the mean and median wall time per request of each path: CPU time is the figure
to compare on a shared machine, where wall time also counts other processes. With --pyinstrument it
profiles the chosen path and prints the call tree; --dump writes one response of each path, to check
that a change keeps the bytes. Numbers are one thread's, without the server's own overhead: use them
to compare two versions of the code on the same machine, and `make bench` for throughput.
"""

from __future__ import annotations

import argparse
import io
import os
import statistics
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from bench.run import django_env, seed_database  # noqa: E402

PATHS = {
    "a": ("/bench/bare/hello", False),
    "c": ("/api/v1/tasks?scope=open", True),
    "c0": ("/bench/bare/tasks?scope=open", False),
    "b": ("/health", False),
}


def environ(path: str, token: str | None) -> dict:
    path_info, _, query = path.partition("?")
    env = {
        "REQUEST_METHOD": "GET",
        "PATH_INFO": path_info,
        "QUERY_STRING": query,
        "SERVER_NAME": "127.0.0.1",
        "SERVER_PORT": "8000",
        "REMOTE_ADDR": "127.0.0.1",
        "HTTP_HOST": "127.0.0.1",
        "HTTP_X_FORWARDED_PROTO": "https",
        "SERVER_PROTOCOL": "HTTP/1.1",
        "wsgi.url_scheme": "http",
        "wsgi.input": io.BytesIO(b""),
        "wsgi.errors": sys.stderr,
        "wsgi.version": (1, 0),
        "wsgi.multithread": True,
        "wsgi.multiprocess": True,
        "wsgi.run_once": False,
    }
    if token:
        env["HTTP_AUTHORIZATION"] = f"Bearer {token}"
    return env


def call(app, path: str, token: str | None, headers: list | None = None) -> tuple[str, bytes]:
    status_line = []

    def start_response(status, response_headers, exc_info=None):
        status_line.append(status)
        if headers is not None:
            headers.extend(response_headers)

    body = b"".join(app(environ(path, token), start_response))
    return status_line[0], body


def dump(app, path: str, token: str | None, target: Path) -> None:
    """One response's status, headers and body, for comparing two versions byte for byte (the request id
    and rate-limit reset change per request and are masked)."""
    headers: list = []
    status, body = call(app, path, token, headers)
    lines = [status]
    for name, value in headers:
        masked = name.lower() in ("x-request-id", "ratelimit-reset", "ratelimit-remaining", "date")
        lines.append(f"{name}: {'*' if masked else value}")
    target.write_bytes("\n".join(lines).encode() + b"\n\n" + body)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--requests", type=int, default=2000, help="timed requests per path")
    parser.add_argument("--path", default="", help=f"only this path ({', '.join(PATHS)}); a is always timed")
    parser.add_argument("--pyinstrument", action="store_true", help="profile --path and print the call tree")
    parser.add_argument("--scale", type=int, default=4)
    parser.add_argument("--no-seed", action="store_true", help="the database is migrated and seeded already")
    parser.add_argument("--cprofile", action="store_true", help="profile --path by CPU time (cProfile), top 40")
    parser.add_argument("--dump", type=Path, help="write one response of each path (headers and body) here")
    args = parser.parse_args()
    for name in ("DATABASE_URL", "REDIS_URL"):
        if not os.environ.get(name):
            raise SystemExit(f"{name} is not set: run this under scripts/testenv.py (make profile)")

    os.environ.update({**django_env("bench.settings"), "LOG_LEVEL": "WARNING"})
    os.chdir(ROOT)
    if not args.no_seed:
        seed_database(dict(os.environ), args.scale)

    import django

    django.setup()
    from django.core.wsgi import get_wsgi_application
    from rest_framework_simplejwt.tokens import RefreshToken

    from accounts.management.commands.ensure_demo_user import DEMO_EMAIL
    from accounts.models import User
    from core.http.ratelimit import forget_overrides
    from core.models import RateLimitOverride

    RateLimitOverride.objects.get_or_create(
        network="127.0.0.1/32", rule="*", defaults={"limit": 10**9, "reason": "bench/profile.py: lift the cap"}
    )
    forget_overrides()
    token = str(RefreshToken.for_user(User.objects.get(email=DEMO_EMAIL)).access_token)
    app = get_wsgi_application()

    keys = ["a", *[k for k in (args.path.split(",") if args.path else PATHS) if k != "a"]]
    for key in keys:
        path, auth = PATHS[key]
        status, body = call(app, path, token if auth else None)
        if not status.startswith("200"):
            raise SystemExit(f"{path}: {status} {body[:300]!r}")
        for _ in range(200):  # warm-up
            call(app, path, token if auth else None)
        if args.dump:
            args.dump.mkdir(parents=True, exist_ok=True)
            dump(app, path, token if auth else None, args.dump / f"{key}.txt")
        times = []
        cpu_start = time.process_time()
        for _ in range(args.requests):
            start = time.perf_counter()
            call(app, path, token if auth else None)
            times.append((time.perf_counter() - start) * 1000)
        cpu = (time.process_time() - cpu_start) * 1000 / args.requests
        print(
            f"{key:>3} {path:<34} cpu {cpu:6.3f} ms  mean {statistics.fmean(times):6.3f} ms"
            f"  median {statistics.median(times):6.3f} ms  ({len(body)} bytes)",
            flush=True,
        )

    if args.cprofile:  # CPU time only: waiting on PostgreSQL and Redis does not count
        here = str(Path(__file__).resolve().parent)  # this file would shadow the standard `profile` module
        sys.path[:] = [entry for entry in sys.path if str(Path(entry or ".").resolve()) != here]
        import cProfile
        import pstats

        key = keys[-1]
        path, auth = PATHS[key]
        profiler = cProfile.Profile(time.process_time)
        profiler.enable()
        for _ in range(args.requests):
            call(app, path, token if auth else None)
        profiler.disable()
        pstats.Stats(profiler).sort_stats("tottime").print_stats(40)
        pstats.Stats(profiler).sort_stats("cumulative").print_stats(60)

    if args.pyinstrument:
        from pyinstrument import Profiler

        key = keys[-1]
        path, auth = PATHS[key]
        profiler = Profiler(interval=0.0002)
        profiler.start()
        for _ in range(args.requests):
            call(app, path, token if auth else None)
        profiler.stop()
        print(profiler.output_text(unicode=True, color=False, show_all=bool(os.environ.get("PROFILE_ALL"))))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
