"""The API's renderers: DRF's JSON renderer, which also serves bodies rendered before (by whatever keeps them:
the kept pages of core.db.pagecache do), and CSV for the views that offer an export (`Accept: text/csv`)."""

from __future__ import annotations

import csv
import io
import json
from collections.abc import Callable, Hashable
from dataclasses import dataclass
from typing import Any, Protocol

from rest_framework import renderers


class RenderedBodies(Protocol):
    """Where a response's rendered bodies are kept (core.db.pagecache.Entry is one)."""

    def body(self, variant: Hashable, render: Callable[[], bytes]) -> bytes:
        """The body kept for `variant`, or `render()`'s (kept, when there is room)."""


@dataclass(frozen=True, slots=True)
class Rendered:
    """A response's data, rendered at most once per media type for a kept page (`entry`) and `variant`:
    `Response(Rendered(...))` answers the bytes DRF would render from `data()`, from the second time
    without building or rendering the data."""

    entry: RenderedBodies
    variant: Hashable
    data: Callable[[], Any]


class JSONRenderer(renderers.JSONRenderer):
    def render(self, data, accepted_media_type=None, renderer_context=None):
        if isinstance(data, Rendered):
            # The accepted media type is part of the key: `application/json; indent=4` renders other bytes.
            return data.entry.body(
                (data.variant, accepted_media_type),
                lambda: super(JSONRenderer, self).render(data.data(), accepted_media_type, renderer_context),
            )
        return super().render(data, accepted_media_type, renderer_context)


# A cell a spreadsheet would run as a formula starts with one of these: it gets a leading apostrophe (OWASP's
# advice against CSV injection), so a competitor named "=HYPERLINK(...)" is shown, never run.
_FORMULA_STARTS = ("=", "+", "-", "@", "\t", "\r")


def csv_cell(value: Any) -> str:
    if value is None:
        return ""
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, int | float):
        return str(value)  # a number, negative too, is a number to a spreadsheet, never a formula
    if isinstance(value, dict | list):
        value = json.dumps(value, separators=(",", ":"), ensure_ascii=False)
    text = str(value)
    return f"'{text}" if text.startswith(_FORMULA_STARTS) else text


def csv_bytes(columns: list[str], rows: list[dict[str, Any]]) -> bytes:
    """A header row of `columns`, then one row per item (a key the columns do not name is left out)."""
    out = io.StringIO()
    writer = csv.writer(out, lineterminator="\r\n")
    writer.writerow(columns)
    for row in rows:
        writer.writerow([csv_cell(row.get(column)) for column in columns])
    return out.getvalue().encode()


class CSVRenderer(renderers.BaseRenderer):
    """`text/csv` for the views that offer an export (docs/decisions.md#csv-exports): the view's
    `csv_table(data)` says the columns and the rows; nested values are written as JSON."""

    media_type = "text/csv"
    format = "csv"
    charset = "utf-8"

    def render(self, data, accepted_media_type=None, renderer_context=None):
        columns, rows = renderer_context["view"].csv_table(data)
        return csv_bytes(columns, rows)
