"""core.db.pagecache's bounds: pages, bodies per page and bytes (the open list's behaviour is in
tests/tasks_market/test_open_list_pages.py)."""

from __future__ import annotations

import threading
import time

import pytest
from django.db import connections

from core.db.pagecache import StampedPages
from core.models import Counter

pytestmark = pytest.mark.django_db(transaction=True)  # inside a transaction nothing is kept


class Reads:
    def __init__(self):
        self.count = 0

    def __call__(self):
        self.count += 1
        return f"page {self.count}"


def test_a_kept_page_is_read_once_and_its_bodies_rendered_once_per_variant():
    pages, reads = StampedPages("test.pages"), Reads()
    renders = []

    def render(variant):
        return lambda: renders.append(variant) or b"x" * 10

    for variant in ("a", "b", "a", "b"):
        pages.page("k", reads).body(variant, render(variant))

    assert reads.count == 1 and renders == ["a", "b"]


def test_bodies_past_the_variants_limit_are_rendered_each_time():
    pages, reads = StampedPages("test.pages", variants=2), Reads()
    renders = []
    for variant in ("a", "b", "c", "c", "a"):
        pages.page("k", reads).body(variant, lambda v=variant: renders.append(v) or b"x")

    assert renders == ["a", "b", "c", "c"]


def test_a_page_too_big_for_a_quarter_of_the_budget_is_read_every_time():
    pages, reads = StampedPages("test.pages", max_bytes=4_000), Reads()
    for _ in range(3):
        pages.page("big", reads).body("v", lambda: b"x" * 600)  # rows and body: 1,200 bytes > 1,000

    assert reads.count == 3


def test_older_pages_make_room_when_the_bytes_run_out():
    pages, reads = StampedPages("test.pages", max_bytes=10_000), Reads()
    for key in ("a", "b", "c", "d"):  # 2,400 bytes each (rows as much as the body): the fifth is too many
        pages.page(key, reads).body("v", lambda: b"x" * 1_200)
    pages.page("a", reads)  # touched: now the newest
    pages.page("e", reads).body("v", lambda: b"x" * 1_200)
    reads_before = reads.count

    pages.page("a", reads)
    pages.page("c", reads)
    assert reads.count == reads_before  # still kept
    pages.page("b", reads)
    assert reads.count == reads_before + 1  # the least recently used went first


def test_at_most_size_pages():
    pages, reads = StampedPages("test.pages", size=2), Reads()
    for key in ("a", "b", "c", "a"):
        pages.page(key, reads)

    assert reads.count == 4  # "a" was pushed out by "c"


def _together(count: int, work) -> list:
    """`work()` on `count` threads released together; what each returned (or raised)."""
    start, results = threading.Barrier(count), [None] * count

    def run(number: int) -> None:
        start.wait()
        try:
            results[number] = work()
        except Exception as exc:
            results[number] = exc
        finally:
            connections.close_all()

    threads = [threading.Thread(target=run, args=(n,)) for n in range(count)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    return results


class SlowReads(Reads):
    def __call__(self):
        time.sleep(0.2)  # long enough that the threads released with the first arrive while it reads
        return super().__call__()


def test_threads_that_miss_the_same_page_together_read_and_render_it_once():
    pages, reads, renders = StampedPages("test.pages"), SlowReads(), []

    def render():
        time.sleep(0.05)
        renders.append(1)
        return b"rendered"

    bodies = _together(8, lambda: pages.page("k", reads).body("v", render))

    assert bodies == [b"rendered"] * 8
    assert reads.count == 1 and len(renders) == 1


def test_threads_waiting_for_a_page_that_moved_while_it_was_read_read_their_own():
    """The first read saw a write land meanwhile (its page is served, not kept): the waiters do not serve
    a page of a state they did not see, they read the state after the write, once."""
    pages, reads = StampedPages("test.pages"), SlowReads()
    first = threading.Lock()

    def read():
        page = reads()
        if first.acquire(blocking=False):  # the first read: a write of the counted rows lands meanwhile
            Counter.objects.create(name="test.pages", shard=0, value=1, version=7)
        return page

    pages_served = _together(4, lambda: pages.page("k", read).page)

    # The first thread's page, then one read of the state after the write, which the other waiters join.
    assert sorted(pages_served) == ["page 1", "page 2", "page 2", "page 2"] and reads.count == 2


def test_a_read_that_fails_leaves_its_waiters_to_read_their_own():
    pages, reads = StampedPages("test.pages"), SlowReads()
    first = threading.Lock()

    def read():
        page = reads()
        if first.acquire(blocking=False):
            raise ConnectionError("the database went away")
        return page

    results = _together(4, lambda: pages.page("k", read).page)

    assert sum(isinstance(result, ConnectionError) for result in results) == 1
    assert all(result == "page 2" for result in results if not isinstance(result, ConnectionError))
    assert reads.count == 2  # the failed read, then one of the waiters' (the others joined it)
    assert pages.page("k", reads).page == "page 2" and reads.count == 2  # kept; nothing left waiting
