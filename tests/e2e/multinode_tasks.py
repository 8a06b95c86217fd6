"""Test-only Celery tasks of the multi-node cluster (tests/e2e/multinode_settings.py), recording into Redis.

`probe` is the beat's one-second entry: each run appends when it ran, the sender (the message's `origin`,
gen<pid>@<host> of the beat process that sent it) and the worker to a list.
`slow_apply(key, seconds)` notes each start, works `seconds`, then applies its effect once per key (a
SET NX, as the project's tasks claim their work), so a run interrupted and redelivered is applied once.
"""

from __future__ import annotations

import time

import redis
from celery import shared_task
from django.conf import settings

PROBE_RUNS = "multinode:probe"


def _redis() -> redis.Redis:
    return redis.Redis.from_url(settings.REDIS_URL)


@shared_task(name="multinode.probe", bind=True)
def probe(self) -> None:
    _redis().rpush(PROBE_RUNS, f"{time.time():.3f} {self.request.origin} {self.request.hostname}")


@shared_task(name="multinode.slow_apply", bind=True)
def slow_apply(self, key: str, seconds: float) -> None:
    client = _redis()
    client.rpush(f"multinode:started:{key}", self.request.hostname)
    time.sleep(seconds)
    if client.set(f"multinode:applied:{key}", self.request.hostname, nx=True):
        client.incr(f"multinode:effects:{key}")
