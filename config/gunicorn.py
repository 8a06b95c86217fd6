"""gunicorn settings for `make serve` (scripts/serve.sh) and `make bench`: gthread workers, JSON logs.

Everything can be tuned from the environment:

- GUNICORN_BIND (default `$HOST:$PORT`, i.e. 127.0.0.1:8443)
- WEB_CONCURRENCY: worker processes (default one per core); GUNICORN_THREADS: threads per worker (default 16);
  GUNICORN_WORKER_CLASS (default config.gunicorn_workers.BalancedThreadWorker, `gthread` for gunicorn's own) and
  GUNICORN_RUNNING: requests of a worker running Python at a time, the others in arrival order (default 1, 0: off)
- TLS_CERT / TLS_KEY: terminate TLS here (as `make serve` does on one machine); without them gunicorn
  speaks plain HTTP and must sit behind a TLS-terminating proxy listed in TRUSTED_PROXIES
- GUNICORN_ACCESS_LOG: `1` (default) logs one JSON line per request, `0` turns that off
- METRICS_PORT (with PROMETHEUS_MULTIPROC_DIR, as scripts/serve.sh sets them): the master serves every worker's
  Prometheus metrics on METRICS_HOST:METRICS_PORT, behind METRICS_TOKEN when set (docs/operations.md#metrics-and-traces)

Why one worker per core with 16 threads each, its requests in turn: docs/operations.md#worker-model. Each thread
keeps its own PostgreSQL connection (CONN_MAX_AGE): cores x 16 per host, which PostgreSQL's max_connections (or a
pooler) must allow.
"""

from __future__ import annotations

import gc
import os

from gunicorn import glogging

from config.gunicorn_workers import running_at_a_time
from core.ops import metrics
from core.ops.logging import JsonFormatter

_cores = os.cpu_count() or 1

bind = [os.environ.get("GUNICORN_BIND") or f"{os.environ.get('HOST', '127.0.0.1')}:{os.environ.get('PORT', '8443')}"]
# gunicorn's gthread with the connections spread over the workers and each worker's requests in turn (the open
# list's p99 0.6 x of plain gthread's at the same requests/s); GUNICORN_WORKER_CLASS=gthread for gunicorn's own
# (docs/operations.md#worker-model).
worker_class = os.environ.get("GUNICORN_WORKER_CLASS") or "config.gunicorn_workers.BalancedThreadWorker"
# One process per core: more processes than cores time-slice each other, and a request whose process is
# descheduled waits out the others' slices (the open list's p99 doubled at 2 x cores). 16 threads each keep
# 2 x cores x 8 requests in flight per host, as before, for the calls that wait on a provider.
workers = int(os.environ.get("WEB_CONCURRENCY") or _cores)
threads = int(os.environ.get("GUNICORN_THREADS") or 16)
# Import Django once in the master: workers fork with the code loaded (faster start, shared pages).
# Nothing opens a connection at import time; each worker connects lazily after the fork.
preload_app = True
timeout = 30
graceful_timeout = 30
keepalive = 5
backlog = 2048
max_requests = int(os.environ.get("GUNICORN_MAX_REQUESTS") or 0)
max_requests_jitter = max_requests // 10

certfile = os.environ.get("TLS_CERT") or None
keyfile = os.environ.get("TLS_KEY") or None

# Whether a request is secure, and who the client is, is decided by core.http.middleware from
# TRUSTED_PROXIES alone: gunicorn must not turn X-Forwarded-Proto into wsgi.url_scheme by itself.
secure_scheme_headers: dict[str, str] = {}
forwarded_allow_ips = "127.0.0.1"  # irrelevant without secure_scheme_headers; kept explicit

accesslog = "-" if os.environ.get("GUNICORN_ACCESS_LOG", "1") != "0" else None
errorlog = "-"
loglevel = (os.environ.get("LOG_LEVEL") or "info").lower()


class JsonLogger(glogging.Logger):
    """gunicorn's own lines as JSON (core.ops.logging.JsonFormatter); the access line carries the request id."""

    def setup(self, cfg) -> None:
        super().setup(cfg)
        for log in (self.error_log, self.access_log):
            for handler in log.handlers:
                handler.setFormatter(JsonFormatter())

    def access(self, resp, req, environ, request_time) -> None:
        if not self.access_log_enabled:
            return
        headers = dict((name.lower(), value) for name, value in resp.headers)
        status = resp.status.split(None, 1)[0] if isinstance(resp.status, str) else resp.status
        duration_ms = round(request_time.total_seconds() * 1000, 2)
        self.access_log.info(
            "%s %s %s",
            environ.get("REQUEST_METHOD"),
            environ.get("PATH_INFO"),
            status,
            extra={
                "request_id": headers.get("x-request-id", "-"),
                "method": environ.get("REQUEST_METHOD"),
                "path": environ.get("PATH_INFO"),
                "status": int(status),
                "duration_ms": duration_ms,
                "bytes": getattr(resp, "sent", None),
                "remote_addr": environ.get("REMOTE_ADDR", "-"),
                "pid": os.getpid(),
            },
        )


logger_class = JsonLogger


def when_ready(server) -> None:
    turns = ""
    if worker_class == "config.gunicorn_workers.BalancedThreadWorker":
        running = running_at_a_time()
        turns = f", {running} request(s) of a worker at a time in turn" if running > 0 else ", all threads at once"
    server.log.info(
        "listening on %s with %s workers x %s threads (%s%s)", ", ".join(bind), workers, threads, worker_class, turns
    )
    # The workers' metrics, served by the master on a port of its own (docs/operations.md#metrics-and-traces).
    if metrics.ENABLED and os.environ.get("METRICS_PORT"):
        metrics.start_exporter(int(os.environ["METRICS_PORT"]))


def pre_fork(server, worker) -> None:
    # What the master imported lives as long as the worker: moved out of the collector's sight, a worker's
    # full collections skip it (about 140,000 objects: 30 ms a collection, every thread of the worker
    # paused, down to under 1 ms) and leave its pages shared (docs/operations.md#worker-model).
    gc.freeze()


def child_exit(server, worker) -> None:
    if metrics.ENABLED:
        metrics.mark_process_dead(worker.pid)
