"""core.db.pagecache's bounds: pages, bodies per page and bytes (the open list's behaviour is in
tests/tasks_market/test_open_list_pages.py)."""

from __future__ import annotations

import pytest

from core.db.pagecache import StampedPages

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
