"""A gthread worker with the connections spread over the workers and each worker's requests running in turn:
`make serve`'s default (config/gunicorn.py; GUNICORN_WORKER_CLASS=gthread for gunicorn's own). On 2 cores it
served the open list with 0.6 x plain gthread's p99 at the same requests/s, read-only and under writes
(docs/operations.md#worker-model).

- **Connections spread.** Every worker watches the same listening socket and a new connection goes to
  whichever takes it first; gthread keeps a connection for as long as its client keeps it alive, so a burst
  of new clients (a proxy opening its pool, a load test starting) stays where it landed: with 32 clients on
  4 workers one held 26 and two none. A worker that holds as many connections as it has threads stops
  watching the socket for `PAUSE` (10 ms) after each accept, so one with a free thread takes the next first. When
  every worker is full each still accepts one connection per `PAUSE`; nothing is refused.
- **Requests in turn.** `GUNICORN_RUNNING` (default 1) requests of a worker run Python at a time, the others
  wait in arrival order (core.http.fairness.FairSlots); 0 turns it off. One at a time is what the GIL allows
  anyway; in turn, a request no longer waits for whichever thread the kernel wakes. A request connects to the
  database before it queues (`connect_first`).
"""

from __future__ import annotations

import contextlib
import os
import time
from collections.abc import Callable

from django.db import DEFAULT_DB_ALIAS, DatabaseError, close_old_connections, connections
from gunicorn.workers.gthread import ThreadWorker

from core.http.fairness import FairSlots


def running_at_a_time() -> int:
    """GUNICORN_RUNNING: how many of a worker's requests run at a time (default 1; 0: every thread)."""
    return int(os.environ.get("GUNICORN_RUNNING") or 1)


def connect_first(app: Callable) -> Callable:
    """`app` with the thread's database connection made (or checked) before the request queues for its turn.

    Connecting waits on the network and on PostgreSQL starting a backend (about 10 ms on a loaded host). Every
    connection is remade once older than CONN_MAX_AGE, so after a pause longer than that (a quiet night, a bulk
    load) each thread's first request reconnects: inside the turns, a worker's 16 did so one after the other,
    and the first requests waited 180 ms (bench/RESULTS.md, "requests in turn"). Outside, they connect side by
    side. A failure here is left to the request itself, which answers it (core.http.middleware)."""

    def application(environ, start_response):
        close_old_connections()  # closes a connection past CONN_MAX_AGE or broken, as the request would
        with contextlib.suppress(DatabaseError):
            connections[DEFAULT_DB_ALIAS].ensure_connection()
        return app(environ, start_response)

    return application


class BalancedThreadWorker(ThreadWorker):
    PAUSE = 0.01  # seconds between two accepts of a worker with no free thread

    def init_process(self) -> None:
        self._paused_until = 0.0  # before the parent's init_process, which runs the loop
        super().init_process()

    def load_wsgi(self) -> None:
        super().load_wsgi()
        running = running_at_a_time()
        if running > 0:
            self.wsgi = connect_first(FairSlots(running).wrap(self.wsgi))

    def accept(self, listener) -> None:
        super().accept(listener)
        if self.nr_conns >= self.cfg.threads:
            self._paused_until = time.monotonic() + self.PAUSE
            self.set_accept_enabled(False)

    def set_accept_enabled(self, enabled: bool) -> None:
        # The loop asks to accept again on its next turn; a paused worker says no until the pause ends.
        if enabled and time.monotonic() < self._paused_until:
            return
        super().set_accept_enabled(enabled)

    def wait_for_and_dispatch_events(self, timeout: float) -> None:
        # Wake when the pause ends, not up to a second later, so a full host takes its next connection.
        if not self._accepting and self._paused_until:
            timeout = max(0.0, min(timeout, self._paused_until - time.monotonic()))
        super().wait_for_and_dispatch_events(timeout)
