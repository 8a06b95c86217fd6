"""Pages of a list kept in the process, each under the state of the list's kept count in which it was read
(docs/decisions.md#open-list-pages).

A list whose rows are exactly what a kept count counts (core.db.counters) can name every state of those rows
by the count's *stamp*: the (shard, version) of its shards, which the count's triggers raise in the
writer's own transaction with every statement that writes a counted row. Two reads that see the same
stamp see the same committed rows; a write is in the stamp from the moment it commits, in every process
and on every node, whoever made it (a service, the admin, `QuerySet.update`, bulk SQL). So:

- a request reads the stamp (one small read: it replaces the page's read on a hit) and serves the page kept
  under it, if any. Nothing is ever invalidated: a commit makes a new stamp, and the pages of old stamps
  age out of a small LRU;
- on a miss it reads the page, then the stamp again, and keeps the page only if the stamp did not move
  between the two reads (the page then shows exactly that state);
- one thread of a process reads a missed page and renders a missed body; the others that want the same one
  meanwhile wait for it (at most `JOIN_SECONDS`) instead of reading it too. Under writes every stamp is a miss
  in every process, and threads that each read and render the same page were a quarter of the open list's
  requests at 20 writes a second (bench/RESULTS.md). A waiter whose page was not kept (moved, too big, an
  error) reads the stamp again and looks once more (a later state is still one its request saw begin), then
  reads its own;
- inside a transaction nothing is kept or served: it may see its own uncommitted writes under a stamp that
  a rollback frees for other rows.

Per process and bounded (64 pages per list, 4 rendered bodies per page, 8 MB of bodies and rows; a page too
big for a quarter of that is read every time), nothing shared: a cold process reads as if there were no
cache.
"""

from __future__ import annotations

import threading
from collections import OrderedDict
from collections.abc import Callable, Hashable
from typing import Any

from django.db import DEFAULT_DB_ALIAS, connections

from core.db import counters
from core.http.fairness import released
from core.ops import metrics

# How long a thread waits for another's read of the same page before it reads its own: longer than a page's
# read and render on a loaded host, short enough that a stuck read costs the waiters little.
JOIN_SECONDS = 0.5


class Entry:
    """One page (whatever the list's `read()` returned) and its rendered bodies, one per variant (what the
    body depends on beyond the page, e.g. which rows are the viewer's)."""

    __slots__ = ("_bodies", "_pages", "_rendering", "kept", "page", "weight")

    def __init__(self, page: Any, pages: StampedPages | None = None, kept: tuple | None = None):
        self.page = page
        self._bodies: dict[Hashable, bytes] = {}
        self._pages = pages  # None: not kept, nothing stored
        self._rendering = threading.Lock() if pages is not None else None
        self.kept = kept
        self.weight = 0  # bytes charged to the pages' budget

    def body(self, variant: Hashable, render: Callable[[], bytes]) -> bytes:
        body = self._bodies.get(variant)
        if body is not None:
            return body
        if self._rendering is None:
            return render()
        # One render of a kept page's body: the threads that want it meanwhile wait for it. `render` builds
        # bytes from the page in memory (no query, no I/O), and the lock is taken before the pages' own.
        with self._rendering:
            body = self._bodies.get(variant)
            if body is None:
                body = render()
                if self._pages is not None and self._pages._admit(self, len(body)):
                    self._bodies[variant] = body
        return body


class StampedPages:
    """The kept pages of the list counted by `counter` (a name registered in core.db.counters): at most `size`
    pages with at most `variants` bodies each, and `max_bytes` of bodies and rows together (a page's rows
    are charged as much as its first body)."""

    def __init__(self, counter: str, *, size: int = 64, variants: int = 4, max_bytes: int = 8 * 2**20):
        self.counter = counter
        self.size = size
        self.variants = variants
        self.max_bytes = max_bytes
        self._entries: OrderedDict[tuple, Entry] = OrderedDict()
        self._bytes = 0
        self._lock = threading.Lock()
        self._reading: dict[tuple, threading.Event] = {}  # pages being read, by the thread that reads them

    def page(self, key: Hashable, read: Callable[[], Any], *, using: str = DEFAULT_DB_ALIAS) -> Entry:
        """The page `key` (everything the page depends on but the stamp) of the current state: kept, or
        `read()` (which reads it from the database)."""
        if connections[using].in_atomic_block:
            self._count("bypass")
            return Entry(read())
        stamp = counters.stamp_of(self.counter)
        kept = (stamp, key)
        for waited in (False, True):  # a waiter whose page was not kept looks once more, then reads its own
            with self._lock:
                entry = self._entries.get(kept)
                if entry is not None:
                    self._entries.move_to_end(kept)
                elif (reading := self._reading.get(kept)) is None:  # this thread reads it
                    self._reading[kept] = reading = threading.Event()
                    break
            if entry is not None:
                self._count("joined" if waited else "hit")
                return entry
            with released():  # another thread reads it: wait, giving a worker's turn away
                reading.wait(JOIN_SECONDS)
            with self._lock:
                entry = self._entries.get(kept)
            if entry is not None:
                self._count("joined")
                return entry
            if not waited:  # not kept (written meanwhile, or the read failed or is slow): the state now
                stamp = counters.stamp_of(self.counter)
                kept = (stamp, key)
        else:
            return self._read(stamp, kept, read)
        try:
            return self._read(stamp, kept, read)
        finally:
            with self._lock:
                del self._reading[kept]
            reading.set()

    def _read(self, stamp, kept: tuple, read: Callable[[], Any]) -> Entry:
        page = read()
        if counters.stamp_of(self.counter) != stamp:
            self._count("moved")  # written meanwhile: served, not kept
            return Entry(page)
        entry = Entry(page, self, kept)
        with self._lock:
            self._forget(self._entries.pop(kept, None))
            self._entries[kept] = entry
            while len(self._entries) > self.size:
                self._forget(self._entries.popitem(last=False)[1])
        self._count("miss")
        return entry

    def clear(self) -> None:
        with self._lock:
            self._entries.clear()
            self._bytes = 0

    def _admit(self, entry: Entry, size: int) -> bool:
        """Whether `entry` may keep one more body of `size` bytes; older pages make room if they must."""
        charge = size * 2 if entry.weight == 0 else size
        with self._lock:
            if self._entries.get(entry.kept) is not entry or len(entry._bodies) >= self.variants:
                return False
            if entry.weight + charge > self.max_bytes // 4:  # too big to keep: read each time
                self._forget(self._entries.pop(entry.kept))
                return False
            entry.weight += charge
            self._bytes += charge
            while self._bytes > self.max_bytes:
                self._forget(self._entries.popitem(last=False)[1])
            return True

    def _forget(self, entry: Entry | None) -> None:
        if entry is not None:
            self._bytes -= entry.weight
            entry._pages = None

    def _count(self, result: str) -> None:
        if metrics.ENABLED:
            metrics.PAGE_CACHE.labels(list=self.counter, result=result).inc()
