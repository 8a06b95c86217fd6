"""The API's JSON renderer: DRF's, which also serves bodies rendered before (by whatever keeps them: the
kept pages of core.db.pagecache do)."""

from __future__ import annotations

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
