"""The embedded broker's transport (`make run`): kombu's SQLAlchemy transport, polling more often.

kombu polls a virtual transport and sleeps `polling_interval` (1 s) whenever a poll finds nothing to take,
which includes every time the worker's prefetch is full: with late acks and a prefetch of 1 that is after
every `concurrency` jobs, so a worker of 2 took about 2 jobs a second and a 30-minute soak built a backlog
it never cleared. SQLAlchemy's transport hands its transport options to `create_engine()`, so the interval
cannot be given there; this class sets it. A poll is one indexed SELECT on a local file.
"""

from __future__ import annotations

from kombu.transport.sqlalchemy import Transport


class EmbeddedBrokerTransport(Transport):
    polling_interval = 0.1
