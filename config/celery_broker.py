"""The embedded broker's transport (`make run`): kombu's SQLAlchemy transport, polling more often (and
soon again while every job it may take is running) and waiting in short slices.

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

from queue import Empty
from time import monotonic, sleep

from kombu.transport.sqlalchemy import Transport


class EmbeddedBrokerTransport(Transport):
    polling_interval = 0.1  # after a poll that found the queues empty
    busy_interval = 0.01  # after one that could take nothing: every job the prefetch allows is running
    max_wait = 0.25

    def drain_events(self, connection, timeout=None):
        """kombu's virtual transport's loop (kombu.transport.virtual.Transport.drain_events), sleeping
        `busy_interval` rather than `polling_interval` while the prefetch is full: a job's end (its late ack) is
        then taken up within 10 ms, where at 0.1 s a worker of 2 ran at most 2 jobs per 0.1 s however short they
        were (`make run` fell behind at 20 saved-search matches a second, 51 ms each). An idle worker still polls
        the file ten times a second (2.5 % of a core; 10 % at 0.02 s)."""
        if timeout is not None:
            timeout = min(timeout, self.max_wait)
        started = monotonic()
        while True:
            try:
                self.cycle.get(self._deliver, timeout=timeout)
                return
            except Empty:
                if timeout is not None and monotonic() - started >= timeout:
                    raise TimeoutError from None  # socket.timeout, as kombu raises it
                interval = self.busy_interval if self._prefetch_full() else self.polling_interval
                sleep(min(interval, timeout) if timeout else interval)

    def _prefetch_full(self) -> bool:
        consuming = [channel for channel in self.channels if channel._consumers]
        return bool(consuming) and not any(channel.qos.can_consume() for channel in consuming)
