"""`timestamptz` values are parsed by psycopg's C loader and come out exactly as Django's own loader gives
them (core.db.dbtypes; docs/decisions.md#timestamptz-loader)."""

from __future__ import annotations

from datetime import UTC

import pytest
from django.db import DataError, connection
from django.db.backends.postgresql.psycopg_any import BaseTzLoader
from psycopg.pq import Format

from core.db import dbtypes

pytestmark = pytest.mark.django_db

VALUES = [
    "2026-11-24 18:00:00.123456+00",
    "2026-11-24 18:00:00+00",  # no fraction
    "2026-11-24 18:00:00.5+00",
    "2026-03-29 01:30:00+02",  # another offset, turned into the connection's zone by PostgreSQL
    "0999-01-01 00:00:00+00",  # a year of three digits
    "9999-12-31 23:59:59.999999+00",
    "2000-02-29 12:00:00-07:30",
]


def _loader():
    return connection.connection.adapters.get_loader(dbtypes.TIMESTAMPTZ_OID, Format.TEXT)


def test_every_connection_parses_timestamptz_in_c():
    connection.ensure_connection()

    assert dbtypes.C_LOADER is not None  # psycopg[binary] is what requirements.txt installs
    assert issubclass(_loader(), dbtypes.CParsedTzLoader)
    assert _loader().timezone == connection.timezone  # else Django's cursor would register its own again


def test_values_load_as_djangos_loader_loads_them():
    connection.ensure_connection()
    with connection.cursor() as cursor:
        cursor.execute(
            "SELECT v::timestamptz, v::timestamptz::text FROM unnest(%s::text[]) v",
            [VALUES],
        )
        rows = cursor.fetchall()

    django_loader = type("DjangoTzLoader", (BaseTzLoader,), {"timezone": connection.timezone})(
        dbtypes.TIMESTAMPTZ_OID, connection.connection
    )
    for loaded, text in rows:
        expected = django_loader.load(text.encode())
        assert loaded == expected
        assert loaded.tzinfo is expected.tzinfo is UTC
        assert loaded.isoformat() == expected.isoformat()


def test_a_null_and_out_of_range_values_behave_as_before():
    connection.ensure_connection()
    with connection.cursor() as cursor:
        cursor.execute("SELECT NULL::timestamptz")
        assert cursor.fetchone() == (None,)
        cursor.execute("SELECT 'infinity'::timestamptz")
        with pytest.raises(DataError, match=r"too large"):  # as with the Python loader
            cursor.fetchone()
