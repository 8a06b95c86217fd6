"""The embedded broker's transport (`make run`): kombu's SQLAlchemy transport, polling more often and
waiting in short slices.

kombu polls a virtual transport and sleeps `polling_interval` (1 s) whenever a poll finds nothing to take,
which includes every time the worker's prefetch is full: with late acks and a prefetch of 1 that is after
every `concurrency` jobs, so a worker of 2 took about 2 jobs a second and a 30-minute soak built a backlog
it never cleared. SQLAlchemy's transport hands its transport options to `create_engine()`, so the interval
cannot be given there; this class sets it. A poll is one indexed SELECT on a local file.

A transport without an event loop gets Celery's blocking loop (celery.worker.loops.synloop), which waits
in `drain_events(timeout=2.0)` and looks for a shutdown request only between two waits, then waits once
more before it acts on one: an idle worker took about 4 s to begin a warm shutdown after SIGTERM. Here a
wait lasts at most `max_wait`; a wait that ends with nothing is an empty poll to that loop, which checks
its state and calls again. A caller without a timeout still blocks until a message comes.
"""

from __future__ import annotations

from kombu.transport.sqlalchemy import Transport


class EmbeddedBrokerTransport(Transport):
    polling_interval = 0.1
    max_wait = 0.25

    def drain_events(self, connection, timeout=None):
        if timeout is not None:
            timeout = min(timeout, self.max_wait)
        return super().drain_events(connection, timeout=timeout)
