"""The list envelope (docs/decisions.md#lists): `{"items": [...], "total": int, "has_more": bool,
"next_cursor": str | null, "total_exact": bool}`, paged by `offset` or by an opaque keyset `cursor`."""

from __future__ import annotations

import base64
import binascii
import json
from functools import cache
from typing import NamedTuple

from django.core.exceptions import ValidationError
from django.db.models import F, Func, IntegerField, QuerySet, Subquery
from django.db.models.fields.tuple_lookups import Tuple, TupleGreaterThan, TupleLessThan
from rest_framework import serializers

from core.api.validation import RequestValidationError, error
from core.db.precompiled import PrecompiledQuery

CURSOR_MAX_CHARS = 512


class OffsetPageQuery(serializers.Serializer):
    """`limit` and `offset` only: the lists that are bounded or keep an offset-only shape (docs/decisions.md#lists)."""

    context_free = True  # validated once per query string and process; not inherited (ApiView.query)

    limit = serializers.IntegerField(min_value=1, max_value=100, default=20)
    offset = serializers.IntegerField(min_value=0, max_value=1_000_000, default=0)


class PageQuery(OffsetPageQuery):
    context_free = True

    cursor = serializers.CharField(
        required=False,
        allow_blank=True,
        max_length=CURSOR_MAX_CHARS,
        help_text="The `next_cursor` of the previous page: the page after it, at the cost of the first. "
        "Not with a non-zero `offset`.",
    )


class Page(NamedTuple):
    rows: list
    total: int
    has_more: bool
    next_cursor: str | None


def page(queryset: QuerySet, *, limit: int, offset: int, total: int | None = None) -> tuple[list, int, bool]:
    """Slice one page. Returns (rows, total, has_more). `total` when the caller keeps the count
    (core.db.counters); else a COUNT: two queries whatever the page size."""
    if total is None:
        total = queryset.count()
    rows = list(queryset[offset : offset + limit])
    return rows, total, offset + len(rows) < total


def keyset_page(
    queryset: QuerySet, *, limit: int, offset: int = 0, cursor: str | None = None, total: int | None = None
) -> Page:
    """One page of an ordered queryset, by `offset` or by `cursor` (the position after the last row of the
    previous page, on the queryset's own order, so that a deep page reads only its rows through the
    order's index). `total` when the caller keeps the count (core.db.counters); else a COUNT."""
    order = keyset_order(queryset)
    after = decode_cursor(cursor, order, queryset.model, offset=offset)
    if total is None:
        total = queryset.count()
    if after is None:
        rows = list(queryset[offset : offset + limit])
        has_more = offset + len(rows) < total
    else:
        rows = list(keyset_after(queryset, order, after)[: limit + 1])
        has_more = len(rows) > limit
        rows = rows[:limit]
    return Page(rows, total, has_more, encode_cursor(rows[-1], order) if has_more and rows else None)


def keyset_rows(
    queryset: QuerySet, *, limit: int, offset: int = 0, cursor: str | None = None
) -> tuple[list, str | None]:
    """One page of an ordered queryset for a list answered as a bare array (no total): its rows and the cursor
    of the page after it, None on the last (docs/decisions.md#lists). One query: a row past the page says
    whether there is one."""
    order = keyset_order(queryset)
    after = decode_cursor(cursor, order, queryset.model, offset=offset)
    if after is not None:
        queryset, offset = keyset_after(queryset, order, after), 0
    rows = list(queryset[offset : offset + limit + 1])
    return rows[:limit], encode_cursor(rows[limit - 1], order) if len(rows) > limit else None


def next_page_link(request, cursor: str | None) -> str | None:
    """The `Link` header of a bare-array page (RFC 8288, as GitHub's API pages): the same request with the next
    page's `cursor` and no `offset`; None on the last page."""
    if cursor is None:
        return None
    query = request.GET.copy()
    query.pop("offset", None)
    query["cursor"] = cursor
    return f'<{request.build_absolute_uri(request.path)}?{query.urlencode()}>; rel="next"'


@cache
def envelope(item_serializer: type[serializers.Serializer]) -> type[serializers.Serializer]:
    """A named `<Item>Page` serializer for the schema and for rendering."""
    name = item_serializer.__name__.removesuffix("Serializer") + "Page"
    return type(
        name,
        (serializers.Serializer,),
        {
            "items": item_serializer(many=True),
            "total": serializers.IntegerField(),
            "has_more": serializers.BooleanField(),
            "next_cursor": serializers.CharField(
                allow_null=True,
                help_text="Pass as `cursor` for the next page; null on the last page.",
            ),
            "total_exact": serializers.BooleanField(
                help_text="Whether `total` is exact; false only where a search counts its matches up to a cap "
                "(a text query) and found more.",
            ),
            "__module__": item_serializer.__module__,
        },
    )


def render_page(
    item_serializer, rows, total: int, has_more: bool, context: dict | None = None, *, next_cursor: str | None = None
) -> dict:
    body = {"items": rows, "total": total, "has_more": has_more, "next_cursor": next_cursor, "total_exact": True}
    return envelope(item_serializer)(body, context=context or {}).data


# Keyset cursors ------------------------------------------------------------------------------------


def keyset_order(queryset: QuerySet) -> tuple[tuple[str, ...], bool]:
    """The queryset's order as (field names, descending). Every column in one direction, the last one
    unique (the primary key), so that the order is total and a row-value comparison follows its index."""
    terms = list(queryset.query.order_by or queryset.model._meta.ordering)
    if not terms or not all(isinstance(term, str) for term in terms):
        raise ValueError(f"keyset paging needs a plain order_by, not {terms!r}")
    descending = {term.startswith("-") for term in terms}
    if len(descending) != 1:
        raise ValueError(f"keyset paging needs one direction for every column: {terms!r}")
    names = tuple(term.lstrip("-") for term in terms)
    if names[-1] not in ("id", "pk"):
        raise ValueError(f"keyset paging needs the primary key last: {terms!r}")
    return names, descending.pop()


def keyset_after(queryset: QuerySet, order: tuple[tuple[str, ...], bool], after: tuple) -> QuerySet:
    names, descending = order
    lookup = TupleLessThan if descending else TupleGreaterThan
    return queryset.filter(lookup(Tuple(*(F(name) for name in names)), tuple(after)))


def encode_cursor(row, order: tuple[tuple[str, ...], bool]) -> str:
    names, _ = order
    values = [row[name] if isinstance(row, dict) else getattr(row, name) for name in names]
    raw = json.dumps([v.isoformat() if hasattr(v, "isoformat") else str(v) for v in values], separators=(",", ":"))
    return base64.urlsafe_b64encode(raw.encode()).decode().rstrip("=")


def decode_cursor(cursor: str | None, order: tuple[tuple[str, ...], bool], model, *, offset: int = 0) -> tuple | None:
    """The cursor's values, typed as the order's fields; a 422 in the contract's shape when it is not
    one of ours or comes with an offset (docs/decisions.md#lists)."""
    if not cursor:
        return None
    if offset:
        raise RequestValidationError(
            [error("value_error", ["query", "offset"], "Value error, offset and cursor cannot be combined", offset)]
        )
    names, _ = order
    try:
        raw = json.loads(base64.urlsafe_b64decode(cursor + "=" * (-len(cursor) % 4)).decode())
        if not isinstance(raw, list) or len(raw) != len(names) or not all(isinstance(v, str) for v in raw):
            raise ValueError(raw)
        values = []
        for name, value in zip(names, raw, strict=True):
            field = model._meta.pk if name == "pk" else model._meta.get_field(name)
            typed = field.to_python(value)
            if typed is None:
                raise ValueError(value)
            values.append(typed)
    except (ValueError, TypeError, UnicodeDecodeError, binascii.Error, ValidationError) as exc:
        raise RequestValidationError(
            [error("value_error", ["query", "cursor"], "Value error, not a cursor of this list", cursor)]
        ) from exc
    return tuple(values)


def encode_offset_cursor(offset: int) -> str:
    """A cursor that carries an offset: for an order with no keyset (a ranked search), as opaque to the client
    as a keyset cursor, and read back by `decode_offset_cursor`."""
    return base64.urlsafe_b64encode(json.dumps({"offset": offset}).encode()).decode().rstrip("=")


def decode_offset_cursor(cursor: str | None, *, offset: int = 0) -> int | None:
    """The offset an `encode_offset_cursor` cursor carries; a 422 in the contract's shape for any other."""
    if not cursor:
        return None
    if offset:
        raise RequestValidationError(
            [error("value_error", ["query", "offset"], "Value error, offset and cursor cannot be combined", offset)]
        )
    try:
        raw = json.loads(base64.urlsafe_b64decode(cursor + "=" * (-len(cursor) % 4)).decode())
        start = raw["offset"] if isinstance(raw, dict) and set(raw) == {"offset"} else None
        if type(start) is not int or not 0 <= start <= 1_000_000:
            raise ValueError(raw)
    except (ValueError, TypeError, UnicodeDecodeError, binascii.Error) as exc:
        raise RequestValidationError(
            [error("value_error", ["query", "cursor"], "Value error, not a cursor of this list", cursor)]
        ) from exc
    return start


# One-query pages (core.db.precompiled) ----------------------------------------------------------------

PAGE_TOTAL = "page_total"


def counted(queryset: QuerySet, total: Subquery | None = None) -> QuerySet:
    """The queryset with its total as one more column (PAGE_TOTAL), for `page_compiled`: an uncorrelated
    scalar subquery, which PostgreSQL runs once (an InitPlan), so the page itself still reads only its
    rows through the index. `total`: a kept count (core.db.counters.total_of) instead of a COUNT."""
    return queryset.annotate(**{PAGE_TOTAL: count_rows(queryset) if total is None else total})


def count_rows(queryset: QuerySet) -> Subquery:
    """COUNT(*) of the queryset's rows as a scalar subquery."""
    return Subquery(queryset.order_by().values(n=Func(F("pk"), function="COUNT")), output_field=IntegerField())


def page_compiled(read: PrecompiledQuery, values=(), *, limit: int, offset: int, count) -> tuple[list[dict], int, bool]:
    """As `page()`, in one query of a `PrecompiledQuery` of `counted(<a .values() queryset>)` with page=True:
    rows as dicts, the total, has_more. `count()` answers the total only when an offset past the end
    leaves no row to carry it."""
    names = read.names()[:-1]
    rows = read.rows(values, limit=limit, offset=offset)
    total = rows[0][-1] if rows else (count() if offset else 0)
    return [dict(zip(names, row, strict=False)) for row in rows], total, offset + len(rows) < total


def keyset_page_compiled(
    read: PrecompiledQuery, values=(), *, limit: int, order: tuple[tuple[str, ...], bool], count
) -> Page:
    """As `keyset_page()` after a cursor, for a `PrecompiledQuery` of `counted(keyset_after(...))` whose last
    placeholders are the cursor's values: limit + 1 rows say whether there is a next page."""
    names = read.names()[:-1]
    rows = read.rows(values, limit=limit + 1, offset=0)
    total = rows[0][-1] if rows else count()
    has_more = len(rows) > limit
    items = [dict(zip(names, row, strict=False)) for row in rows[:limit]]
    return Page(items, total, has_more, encode_cursor(items[-1], order) if has_more else None)


def page_cursor(rows: list[dict], order: tuple[tuple[str, ...], bool], has_more: bool) -> str | None:
    """The `next_cursor` of an offset page: clients may switch to cursors after any page."""
    return encode_cursor(rows[-1], order) if has_more and rows else None
