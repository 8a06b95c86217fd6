"""Prometheus metrics: requests per route, database and cache timings, Celery tasks, queue depth, business counters.

On when PROMETHEUS_MULTIPROC_DIR is set (scripts/serve.sh sets it, one directory per role, when METRICS_PORT
is set); off otherwise, and then nothing here runs per request. Why prometheus-client in its multiprocess
mode rather than django-prometheus, what is exposed and how it is kept private: docs/operations.md#metrics-and-traces.

Every process of a role (gunicorn's workers, Celery's prefork children) writes its samples to memory-mapped
files in that directory; one exporter per role (the gunicorn master, the Celery worker's main process) reads
them all on a scrape, on its own port (METRICS_PORT for the web, METRICS_WORKER_PORT for the worker), which
the load balancer never forwards. The exporters listen on METRICS_HOST (loopback by default); with
METRICS_TOKEN set they answer only scrapes that send it as a bearer token, and on any other address than
loopback they refuse to start without one (as `check --deploy` does: core.checks).

The business counters are defined here once and incremented by the apps at their service points with
`business_count(...)`, after the transaction commits (a rolled-back change counts nothing).
"""

from __future__ import annotations

import functools
import hmac
import ipaddress
import logging
import os
import socket
import threading
import time
from wsgiref.simple_server import WSGIRequestHandler, WSGIServer, make_server

from django.core.cache.backends.base import BaseCache
from django.db import transaction
from django.urls import Resolver404, resolve
from prometheus_client import CollectorRegistry, Counter, Histogram, make_wsgi_app
from prometheus_client.core import GaugeMetricFamily
from prometheus_client.exposition import ThreadingWSGIServer

logger = logging.getLogger(__name__)

ENABLED = bool(os.environ.get("PROMETHEUS_MULTIPROC_DIR"))

_FAST = (0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1.0, 2.5)
_REQUEST = (0.005, 0.01, 0.025, 0.05, 0.075, 0.1, 0.25, 0.5, 1.0, 2.5, 5.0, 10.0)
_TASK = (0.01, 0.05, 0.1, 0.5, 1.0, 5.0, 10.0, 30.0, 60.0, 120.0, 300.0)

# --- The metrics ------------------------------------------------------------------------------------------

HTTP_REQUESTS = Counter(
    "http_requests_total", "Requests answered, by route name, method and status.", ["route", "method", "status"]
)
HTTP_LATENCY = Histogram(
    "http_request_duration_seconds", "Time to answer, by route name and method.", ["route", "method"], buckets=_REQUEST
)
DB_QUERY = Histogram(
    "db_query_duration_seconds", "Time of each SQL statement, by database alias.", ["alias"], buckets=_FAST
)
CACHE_CALL = Histogram(
    "cache_operation_duration_seconds",
    "Time of each cache call, by backend and operation.",
    ["backend", "operation"],
    buckets=_FAST,
)
CELERY_TASKS = Counter(
    "celery_tasks_total", "Celery tasks run, by task name and outcome (succeeded, failed, retried).", ["task", "state"]
)
CELERY_TASK_DURATION = Histogram(
    "celery_task_duration_seconds", "Time a Celery task ran, by task name.", ["task"], buckets=_TASK
)
PAYMENTS_SETTLED = Counter("payments_settled_total", "Provider payment events applied, by event type.", ["type"])
WEBHOOK_DELIVERIES = Counter("webhook_deliveries_total", "Outbound webhook delivery attempts, by outcome.", ["outcome"])
AGENT_DISPATCHES = Counter("agent_dispatches_total", "Agent dispatch attempts, by outcome.", ["outcome"])
CREDITS_SPENT = Counter("credits_spent_total", "Credits taken for paid work (image generations).")
PAGE_CACHE = Counter(
    "page_cache_total",
    "Pages of kept lists (core.db.pagecache), by list and result: hit, miss (read and kept), joined (waited for "
    "another thread's read of it), moved (read, not kept: written meanwhile), bypass (in a transaction).",
    ["list", "result"],
)


def business_count(counter: Counter, amount: float = 1, **labels: str) -> None:
    """Count a business event once the current transaction commits (at once outside one)."""
    if not ENABLED:
        return
    metric = counter.labels(**labels) if labels else counter
    transaction.on_commit(lambda: metric.inc(amount))


# --- Requests ---------------------------------------------------------------------------------------------


def _route(request) -> str:
    """The resolved URL name (namespace:name), else its pattern; never the raw path (unbounded labels)."""
    match = getattr(request, "resolver_match", None)
    if match is None:  # answered by a middleware before the URL was resolved (429, 403 https_required)
        try:
            match = resolve(request.path_info)
        except Resolver404:
            return "<unresolved>"
    return match.view_name if match.url_name else (match.route or "<unnamed>")


class MetricsMiddleware:
    """First in MIDDLEWARE when metrics are on (config/settings/observability.py): counts every answer."""

    def __init__(self, get_response):
        self.get_response = get_response

    def __call__(self, request):
        started = time.perf_counter()
        response = self.get_response(request)
        route, method = _route(request), request.method
        HTTP_LATENCY.labels(route, method).observe(time.perf_counter() - started)
        HTTP_REQUESTS.labels(route, method, str(response.status_code)).inc()
        return response


# --- Database and cache timings ---------------------------------------------------------------------------


def _time_query(execute, sql, params, many, context):
    started = time.perf_counter()
    try:
        return execute(sql, params, many, context)
    finally:
        DB_QUERY.labels(context["connection"].alias).observe(time.perf_counter() - started)


def _on_connection_created(sender, connection, **kwargs) -> None:
    if _time_query not in connection.execute_wrappers:
        connection.execute_wrappers.append(_time_query)


_CACHE_OPERATIONS = ("get", "set", "add", "delete", "get_many", "set_many", "delete_many", "incr", "touch", "has_key")


def _timed(backend: str, operation: str, method):
    histogram = CACHE_CALL.labels(backend, operation)

    @functools.wraps(method)
    def wrapper(*args, **kwargs):
        started = time.perf_counter()
        try:
            return method(*args, **kwargs)
        finally:
            histogram.observe(time.perf_counter() - started)

    wrapper._metrics_timed = True
    return wrapper


def _instrument_cache(cls: type[BaseCache]) -> None:
    for operation in _CACHE_OPERATIONS:
        method = getattr(cls, operation, None)
        if method is not None and not getattr(method, "_metrics_timed", False):
            setattr(cls, operation, _timed(cls.__name__, operation, method))


# --- Celery -----------------------------------------------------------------------------------------------

_task_started: dict[str, float] = {}


def _task_prerun(task_id=None, **kwargs) -> None:
    _task_started[task_id] = time.perf_counter()


def _task_postrun(task_id=None, task=None, state=None, **kwargs) -> None:
    started = _task_started.pop(task_id, None)
    if started is not None:
        CELERY_TASK_DURATION.labels(task.name).observe(time.perf_counter() - started)
    outcome = {"SUCCESS": "succeeded", "FAILURE": "failed", "RETRY": "retried"}.get(state, str(state).lower())
    CELERY_TASKS.labels(task.name, outcome).inc()


class QueueDepthCollector:
    """`celery_queue_length{queue}`: the Redis broker's list lengths, read at each scrape by the worker's exporter.

    The embedded broker (`make run`) has no exporter: metrics are for `make serve`, which runs on Redis.
    """

    def __init__(self, app):
        self.app = app

    def collect(self):
        family = GaugeMetricFamily("celery_queue_length", "Messages waiting in the broker, by queue.", labels=["queue"])
        try:
            with self.app.connection_for_read() as conn:
                client = conn.default_channel.client
                for queue in sorted(self.app.amqp.queues):
                    family.add_metric([queue], client.llen(queue))
        except Exception as exc:  # a scrape must not fail because the broker is away; the gauge is then absent
            logger.warning("queue depth unavailable: %s", exc)
            return []
        return [family]


# --- Start-up ---------------------------------------------------------------------------------------------


def install() -> None:
    """Connect the timings (database, cache, Celery) in this process; from CoreConfig.ready() when ENABLED."""
    from celery.signals import task_postrun, task_prerun, worker_ready
    from django.conf import settings
    from django.db.backends.signals import connection_created
    from django.utils.module_loading import import_string

    connection_created.connect(_on_connection_created, dispatch_uid="core.ops.metrics.db")
    for config in settings.CACHES.values():
        _instrument_cache(import_string(config["BACKEND"]))
    task_prerun.connect(_task_prerun, dispatch_uid="core.ops.metrics.prerun", weak=False)
    task_postrun.connect(_task_postrun, dispatch_uid="core.ops.metrics.postrun", weak=False)
    worker_ready.connect(_start_worker_exporter, dispatch_uid="core.ops.metrics.worker_exporter", weak=False)


def _start_worker_exporter(**kwargs) -> None:
    """The Celery worker's main process serves its pool's samples and the queue depth (after the pool forked)."""
    from celery import current_app

    port = int(os.environ.get("METRICS_WORKER_PORT") or 0)
    if port:
        start_exporter(port, celery_app=current_app)


def start_exporter(port: int, *, celery_app=None) -> None:
    """Serve every process's samples of this role (the multiprocess directory) on METRICS_HOST:port, in a thread."""
    from django.conf import settings
    from prometheus_client import multiprocess

    registry = CollectorRegistry()
    multiprocess.MultiProcessCollector(registry)
    if celery_app is not None:
        registry.register(QueueDepthCollector(celery_app))
    serve(registry, port, host=settings.METRICS_HOST, token=settings.METRICS_TOKEN)


def bind_is_private(host: str) -> bool:
    """Whether an exporter bound to `host` is reachable from this machine only: a loopback address."""
    if host == "localhost":
        return True
    try:
        return ipaddress.ip_address(host).is_loopback
    except ValueError:  # a name, or "" (every interface)
        return False


class _QuietHandler(WSGIRequestHandler):
    def log_message(self, format, *args):
        """No access log: Prometheus scrapes every few seconds."""


def _bearer_only(app, token: str):
    expected = f"Bearer {token}".encode()

    def guarded(environ, start_response):
        if hmac.compare_digest(environ.get("HTTP_AUTHORIZATION", "").encode(), expected):
            return app(environ, start_response)
        start_response("401 Unauthorized", [("Content-Type", "text/plain"), ("WWW-Authenticate", "Bearer")])
        return [b"401 Unauthorized: send METRICS_TOKEN as a bearer token\n"]

    return guarded


def serve(registry: CollectorRegistry, port: int, *, host: str, token: str) -> WSGIServer | None:
    """Serve `registry` at http://host:port/metrics in a daemon thread; with `token`, only to requests that send
    `Authorization: Bearer <token>`. A host other than loopback without a token is refused: logged at ERROR,
    nothing listens (the exporter-down alert then fires), None is returned."""
    if not token and not bind_is_private(host):
        logger.error(
            "metrics exporter not started: METRICS_HOST %r is not a loopback address and METRICS_TOKEN is empty",
            host,
        )
        return None
    app = make_wsgi_app(registry)
    if token:
        app = _bearer_only(app, token)
    family = socket.getaddrinfo(host or None, port, type=socket.SOCK_STREAM, flags=socket.AI_PASSIVE)[0][0]
    # prometheus-client's own threaded server (daemon threads: a scrape never holds up the exit), for the
    # host's address family, as its start_http_server picks it.
    server_class = type("ExporterServer", (ThreadingWSGIServer,), {"address_family": family})
    server = make_server(host, port, app, server_class, handler_class=_QuietHandler)
    threading.Thread(target=server.serve_forever, name="metrics-exporter", daemon=True).start()
    logger.info("metrics on http://%s:%s/metrics%s", host, port, " (bearer token)" if token else "")
    return server


def mark_process_dead(pid: int) -> None:
    """A gunicorn worker or Celery child exited: drop its live gauges (its counters stay summed)."""
    from prometheus_client import multiprocess

    multiprocess.mark_process_dead(pid)
