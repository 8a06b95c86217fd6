"""`timestamptz` values parsed by psycopg's C extension (docs/decisions.md#timestamptz-loader).

Django's psycopg 3 backend registers its own `timestamptz` loader on every connection
(`django.db.backends.postgresql.psycopg_any.BaseTzLoader`) so that each value carries the connection's
time zone. It subclasses psycopg's pure-Python loader, and psycopg's C loader cannot be subclassed
(final in Cython): with `psycopg[binary]` installed, every datetime still goes through the Python parser
(Django ticket #36960, psycopg issue #1273). The open-task list reads about sixty of them a request.

`install(connection)` registers, on one connection, Django's loader with the parse done by the C
loader that psycopg itself would use: same input, same result (Django's `replace(tzinfo=...)` with the
connection's zone), found through psycopg's public `AdaptersMap.get_loader`. When psycopg has no C
loader (the pure-Python build) nothing is registered and Django's loader stays.
"""

from __future__ import annotations

import psycopg
from django.db.backends.postgresql.psycopg_any import BaseTzLoader
from psycopg.adapt import Loader
from psycopg.postgres import types as pg_types
from psycopg.pq import Format
from psycopg.types.datetime import TimestamptzLoader

TIMESTAMPTZ_OID = pg_types["timestamptz"].oid


def _c_loader() -> type[Loader] | None:
    loader = psycopg.adapters.get_loader(TIMESTAMPTZ_OID, Format.TEXT)
    return None if loader is None or loader is TimestamptzLoader else loader


C_LOADER = _c_loader()


class CParsedTzLoader(BaseTzLoader):
    """Django's loader for one time zone (`timezone`, the attribute Django's cursor checks), parsed in C."""

    def __init__(self, oid, context=None):
        super().__init__(oid, context)
        self._parse = C_LOADER(oid, context).load

    def load(self, data):
        return self._parse(data).replace(tzinfo=self.timezone)


def install(connection) -> bool:
    """Register the C-parsed loader on `connection` (a Django DatabaseWrapper for PostgreSQL, connected)."""
    if C_LOADER is None or connection.vendor != "postgresql":
        return False
    loader = type("CParsedTzLoader", (CParsedTzLoader,), {"timezone": connection.timezone})
    connection.connection.adapters.register_loader(TIMESTAMPTZ_OID, loader)
    return True
