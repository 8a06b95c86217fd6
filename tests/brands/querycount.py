"""Constant query counts: the same number of queries for a list of 1 row as for 25 rows."""

from __future__ import annotations

from collections.abc import Callable

from django.db import connection
from django.test.utils import CaptureQueriesContext


def queries_for(client, url: str, params: dict | None = None) -> int:
    with CaptureQueriesContext(connection) as ctx:
        response = client.get(url, params or {})
    assert response.status_code == 200, response.content
    return len(ctx.captured_queries)


def assert_constant_queries(client, url: str, add_row: Callable[[], object], params: dict | None = None) -> int:
    """Adds one row, counts; adds 24 more, counts again; the counts must be equal. A first request
    warms what the platform caches per process (e.g. rate-limit overrides)."""
    add_row()
    client.get(url, params or {})
    one = queries_for(client, url, params)
    for _ in range(24):
        add_row()
    twenty_five = queries_for(client, url, params)
    assert one == twenty_five, f"{url}: {one} queries for 1 row, {twenty_five} for 25"
    return one
