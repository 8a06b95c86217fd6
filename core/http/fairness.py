"""Requests take turns at running Python, first come first served (docs/operations.md#worker-model).

A gthread worker runs each request on one of its threads, and its threads share one GIL, which CPython
hands to whichever waiting thread the kernel wakes, not in turn. On a busy host a 2 ms request then waits
20-35 ms inside the process, and some wait many turns: that was most of the open list's p99.
`FairSlots` lets `size` requests of a process run at a time and queues the others in arrival order, so
the threads stay (a request waiting on a provider holds one) but the queue is in order.

A slot is never a lock that can hold the process up:

- a request that waits on the network gives its slot back meanwhile (`released()`, used by the outbound
  HTTP transports of core.http.outbound) and queues again afterwards;
- a slot held for longer than `stale` seconds (a slow client's body, a call made outside those
  transports, a heavy page) stops counting, so the next request in line runs anyway. Nothing waits for
  longer than that, and no order of locks (a database row, SQLite's write lock) can deadlock on a slot.

Outside a slot-holding request (Celery, management commands, `make run`'s server) `released()` does nothing.
"""

from __future__ import annotations

import contextlib
import threading
import time
from collections.abc import Callable, Iterator

_held = threading.local()  # the FairSlots this thread holds a slot of, if any


class FairSlots:
    def __init__(self, size: int, stale: float = 0.05) -> None:
        if size < 1:
            raise ValueError("at least one slot")
        self.size, self.stale = size, stale
        self._cond = threading.Condition(threading.Lock())
        self._issued = 0  # tickets handed out: the next one's number
        self._serving = 0  # the ticket whose turn it is
        self._holders: dict[int, float] = {}  # ticket -> when it took its slot

    def _busy(self, now: float) -> tuple[int, float | None]:
        """Slots held for less than `stale`, and when the first of them goes stale."""
        fresh = [since for since in self._holders.values() if now - since < self.stale]
        return len(fresh), (min(fresh) + self.stale if fresh else None)

    def acquire(self) -> int:
        with self._cond:
            ticket = self._issued
            self._issued += 1
            while True:
                now = time.monotonic()
                busy, frees_at = self._busy(now)
                if ticket == self._serving and busy < self.size:
                    break
                self._cond.wait(None if frees_at is None or ticket != self._serving else frees_at - now)
            self._serving += 1
            self._holders[ticket] = time.monotonic()
            self._cond.notify_all()  # the next ticket may run too, if a slot is free
        _held.slots, _held.ticket = self, ticket
        return ticket

    def waiting(self) -> int:
        """Requests queued for their turn."""
        with self._cond:
            return self._issued - self._serving

    def release(self, ticket: int) -> None:
        _held.slots = None
        with self._cond:
            self._holders.pop(ticket, None)
            self._cond.notify_all()

    def wrap(self, app: Callable) -> Callable:
        """The WSGI `app`, each call of it in a slot (the response's body is sent after it is let go)."""

        def application(environ, start_response):
            self.acquire()
            try:
                return app(environ, start_response)
            finally:
                self.release(_held.ticket)  # the ticket of its last turn (`released()` queues anew)

        return application


@contextlib.contextmanager
def released() -> Iterator[None]:
    """This thread's slot, if it holds one, given back while the block waits (on the network), then queued
    for again: the request resumes in its turn."""
    slots = getattr(_held, "slots", None)
    if slots is None:
        yield
        return
    slots.release(_held.ticket)
    try:
        yield
    finally:
        slots.acquire()
