"""Pages of a list kept in the process, each under the state of the list's kept count in which it was read
(docs/decisions.md#open-list-pages).

A list whose rows are exactly what a kept count counts (core.counters) can name every state of those rows
by the count's *stamp*: the (shard, version) of its shards, which the count's triggers raise in the
writer's own transaction with every statement that writes a counted row. Two reads that see the same
stamp see the same committed rows; a write is in the stamp from the moment it commits, in every process
and on every node, whoever made it (a service, the admin, `QuerySet.update`, bulk SQL). So:

- a request reads the stamp (one small read: it replaces the page's read on a hit) and serves the page kept
  under it, if any. Nothing is ever invalidated: a commit makes a new stamp, and the pages of old stamps
  age out of a small LRU;
- on a miss it reads the page, then the stamp again, and keeps the page only if the stamp did not move
  between the two reads (the page then shows exactly that state);
- inside a transaction nothing is kept or served: it may see its own uncommitted writes under a stamp that
  a rollback frees for other rows.

Per process, bounded (`size` pages per list, each with at most `variants` rendered bodies), nothing shared:
a cold process reads as if there were no cache.
"""

from __future__ import annotations

import threading
from collections import OrderedDict
from collections.abc import Callable, Hashable
from typing import Any

from django.db import DEFAULT_DB_ALIAS, connections

from core import counters, metrics


class Entry:
    """One page (whatever the list's `read()` returned) and its rendered bodies, one per variant (what the
    body depends on beyond the page, e.g. which rows are the viewer's)."""

    __slots__ = ("_bodies", "_variants", "page")

    def __init__(self, page: Any, variants: int = 0):
        self.page = page
        self._bodies: dict[Hashable, bytes] = {}
        self._variants = variants

    def body(self, variant: Hashable, render: Callable[[], bytes]) -> bytes:
        body = self._bodies.get(variant)
        if body is None:
            body = render()
            if len(self._bodies) < self._variants:
                self._bodies[variant] = body  # a plain dict store: atomic, and a race only renders twice
        return body


class StampedPages:
    """The kept pages of the list counted by `counter` (a name registered in core.counters)."""

    def __init__(self, counter: str, *, size: int = 64, variants: int = 8):
        self.counter = counter
        self.size = size
        self.variants = variants
        self._entries: OrderedDict[tuple, Entry] = OrderedDict()
        self._lock = threading.Lock()

    def page(self, key: Hashable, read: Callable[[], Any], *, using: str = DEFAULT_DB_ALIAS) -> Entry:
        """The page `key` (everything the page depends on but the stamp) of the current state: kept, or
        `read()` (which reads it from the database)."""
        if connections[using].in_atomic_block:
            self._count("bypass")
            return Entry(read())
        _total, stamp = counters.state_of(self.counter)
        kept = (stamp, key)
        with self._lock:
            entry = self._entries.get(kept)
            if entry is not None:
                self._entries.move_to_end(kept)
        if entry is not None:
            self._count("hit")
            return entry
        entry = Entry(read(), self.variants)
        if counters.state_of(self.counter)[1] == stamp:
            with self._lock:
                self._entries[kept] = entry
                while len(self._entries) > self.size:
                    self._entries.popitem(last=False)
            self._count("miss")
        else:
            self._count("moved")  # written meanwhile: served, not kept
        return entry

    def clear(self) -> None:
        with self._lock:
            self._entries.clear()

    def _count(self, result: str) -> None:
        if metrics.ENABLED:
            metrics.PAGE_CACHE.labels(list=self.counter, result=result).inc()
