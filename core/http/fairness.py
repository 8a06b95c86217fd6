"""Requests take turns at running Python, first come first served (docs/operations.md#worker-model).

A gthread worker runs each request on one of its threads, and its threads share one GIL, which CPython
hands to whichever waiting thread the kernel wakes, not in turn. On a busy host a 2 ms request then waits
20-35 ms inside the process, and some wait many turns: that was most of the open list's p99.
`FairSlots` lets `size` requests of a process run at a time and queues the others in arrival order, so
the threads stay (a request waiting on a provider holds one) but the queue is in order. A release hands
its slot to the first in line and wakes that one thread only.

A slot is never a lock that can hold the process up:

- a request that waits on the network gives its slot back meanwhile (`released()`, used by the outbound
  HTTP transports of core.http.outbound, and a wait for another thread's read of the same page) and takes
  one again at the head of the line afterwards: it came before those now waiting;
- a slot held for longer than `stale` seconds (a slow client's body, a call made outside those
  transports, a heavy page) stops counting, so the next request in line runs anyway. Nothing waits for
  longer than that, and no order of locks (a database row, SQLite's write lock) can deadlock on a slot.

Outside a slot-holding request (Celery, management commands, `make run`'s server) `released()` does nothing.
"""

from __future__ import annotations

import contextlib
import threading
import time
from collections import deque
from collections.abc import Callable, Iterator

_held = threading.local()  # the FairSlots this thread holds a slot of, if any


class _Waiter:
    """A queued request: its gate opens when a slot is handed to it."""

    __slots__ = ("gate", "granted", "ticket")

    def __init__(self, ticket: int) -> None:
        self.ticket, self.granted = ticket, False
        self.gate = threading.Lock()
        self.gate.acquire()


class FairSlots:
    """`size` slots, handed over in arrival order. A release wakes the one request it hands its slot to, not
    every waiter: with 16 threads a process, waking them all to find the next ticket cost more CPU than the
    order saved. Only a wait for a slot held past `stale` runs on a timer."""

    def __init__(self, size: int, stale: float = 0.05) -> None:
        if size < 1:
            raise ValueError("at least one slot")
        self.size, self.stale = size, stale
        self._lock = threading.Lock()
        self._issued = 0  # tickets handed out: the next one's number
        self._queue: deque[_Waiter] = deque()  # in arrival order
        self._holders: dict[int, float] = {}  # ticket -> when it took its slot

    def _free(self, now: float) -> int:
        """Slots not held, a slot held for `stale` or longer counting as free."""
        return self.size - sum(1 for since in self._holders.values() if now - since < self.stale)

    def _hand_over(self, now: float) -> list[_Waiter]:
        """Gives the free slots to the first in line (under the lock): the waiters to wake."""
        woken = []
        free = self._free(now)
        while free > 0 and self._queue:
            waiter = self._queue.popleft()
            waiter.granted = True
            self._holders[waiter.ticket] = now
            woken.append(waiter)
            free -= 1
        return woken

    def acquire(self, *, resuming: bool = False) -> int:
        """A slot, in turn. `resuming`: the request had one and gave it away to wait (`released()`); it came
        before everyone now in line, so it goes first."""
        with self._lock:
            ticket = self._issued
            self._issued += 1
            now = time.monotonic()
            if (resuming or not self._queue) and self._free(now) > 0:
                self._holders[ticket] = now
                _held.slots, _held.ticket = self, ticket
                return ticket
            waiter = _Waiter(ticket)
            if resuming:
                self._queue.appendleft(waiter)
            else:
                self._queue.append(waiter)
        while True:
            # A wait is woken by the release that hands it a slot; a timer only covers slots held past `stale`
            # (the first in line sleeps until the oldest fresh one goes stale, the others check that often).
            with self._lock:
                now = time.monotonic()
                fresh = [since for since in self._holders.values() if now - since < self.stale]
                first = self._queue and self._queue[0] is waiter
                timeout = (min(fresh) + self.stale - now) if first and fresh else self.stale
            waiter.gate.acquire(timeout=max(timeout, 0.001))
            with self._lock:
                if not waiter.granted:
                    woken = self._hand_over(time.monotonic())  # a slot went stale
                    for other in woken:
                        if other is not waiter:
                            other.gate.release()
                if waiter.granted:
                    break
        _held.slots, _held.ticket = self, ticket
        return ticket

    def waiting(self) -> int:
        """Requests queued for their turn."""
        with self._lock:
            return len(self._queue)

    def release(self, ticket: int) -> None:
        _held.slots = None
        with self._lock:
            self._holders.pop(ticket, None)
            woken = self._hand_over(time.monotonic())
        for waiter in woken:
            waiter.gate.release()

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
    """This thread's slot, if it holds one, given back while the block waits (on the network), then taken
    again at the head of the line: the request resumes before those that came after it."""
    slots = getattr(_held, "slots", None)
    if slots is None:
        yield
        return
    slots.release(_held.ticket)
    try:
        yield
    finally:
        slots.acquire(resuming=True)
