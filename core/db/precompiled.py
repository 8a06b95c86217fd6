"""Reads the ORM compiles once per process and that then run with new parameters.

Django compiles a queryset to SQL afresh every time it is evaluated: for the simple reads of the hottest
request (the JWT's user row, the open-task page) that costs more CPU than PostgreSQL spends answering.
A `PrecompiledQuery` is built from an ordinary queryset in which the values that vary are
*placeholders*; the first use on a connection compiles it through the ORM (so the SQL, the columns and the
converters are exactly the ORM's), and every later use only swaps the parameters in. What it caches is a
pure function of the code and the database vendor: per process, immutable, nothing another process needs
(docs/decisions.md#running).

It still runs through Django's cursor (execute wrappers, query logging, `django_assert_num_queries`).

Only on PostgreSQL: elsewhere (SQLite for `make run`) the ORM prepares parameters into another form (a
UUID becomes its hex string), so each call compiles the queryset with its real values, as the ORM would.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

from django.db import connections
from django.db.models import QuerySet


class PrecompiledQuery:
    """`build(*values)` returns the queryset for one call's values; built with `placeholders`, it is the
    query compiled once, in which the values of each call then stand where the placeholders stood.

    Each placeholder must reach the SQL parameters unchanged (the first compilation checks it) and be
    a value no constant of the query can equal. No slice in the queryset (Django writes LIMIT/OFFSET
    into the SQL text): pass `page=True` and give `limit` and `offset` to `rows()`.
    """

    def __init__(self, build: Callable[[], QuerySet], placeholders: Sequence[Any] = (), *, page: bool = False):
        self._build = build
        self._placeholders = tuple(placeholders)
        self._page = page
        self._compiled: dict[str, tuple] = {}

    def _compile(self, alias: str, values: Sequence[Any] | None = None):
        """The query built with `values` (compiled for this call only), or with the placeholders (kept)."""
        queryset = self._build(*(self._placeholders if values is None else values))
        if queryset.query.is_sliced:
            raise ValueError("PrecompiledQuery: slice with page=True, not in the queryset")
        compiler = queryset.query.get_compiler(using=alias)
        sql, params = compiler.as_sql()
        slots = []  # per placeholder, where it is in the parameters (a subquery repeats its parameters)
        for placeholder in self._placeholders if values is None and _reusable(alias) else ():
            found = [i for i, value in enumerate(params) if value == placeholder]
            if not found:
                raise ValueError(
                    f"PrecompiledQuery: placeholder {placeholder!r} is not among the parameters {params!r}"
                )
            slots.append(found)
        if self._page:
            sql += " LIMIT %s OFFSET %s"
        converters = list(compiler.get_converters([column[0] for column in compiler.select]).items())
        query = compiler.query
        names = [*query.extra_select, *query.values_select, *query.annotation_select]
        compiled = (sql, list(params), slots, converters, names)
        if values is None:
            self._compiled[alias] = compiled
        return compiled

    def rows(self, values: Sequence[Any] = (), *, limit: int | None = None, offset: int = 0, using: str = "default"):
        """The result rows (sequences) in the queryset's column order, converted as the ORM converts them."""
        connection = connections[using]
        if _reusable(using):
            sql, params, slots, converters, _names = self._compiled.get(using) or self._compile(using)
            params = list(params)
            for found, value in zip(slots, values, strict=True):
                for slot in found:
                    params[slot] = value
        else:
            sql, params, _slots, converters, _names = self._compile(using, values)
            params = list(params)
        if self._page:
            params += [limit, offset]
        with connection.cursor() as cursor:
            cursor.execute(sql, params)
            rows = cursor.fetchall()
        if converters:  # as SQLCompiler.apply_converters
            converted = []
            for row in rows:
                row = list(row)
                for position, (functions, expression) in converters:
                    value = row[position]
                    for function in functions:
                        value = function(value, expression, connection)
                    row[position] = value
                converted.append(row)
            rows = converted
        return rows

    def names(self, using: str = "default") -> list[str]:
        """The column names of a `.values()` queryset, in the order of `rows()`."""
        return (self._compiled.get(using) or self._compile(using))[4]


def _reusable(alias: str) -> bool:
    """Whether a query compiled once can take other values as they are (PostgreSQL: psycopg adapts them)."""
    return connections[alias].vendor == "postgresql"
