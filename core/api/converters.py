"""Path converters.

A malformed UUID in a path must be a 422 with `loc: ["path", name]` (docs/decisions.md#errors), not Django's
404 from a converter that refuses to match. So the `uuid` converter here matches any segment and
hands the view either a UUID or an `InvalidUUID`; the base view reports the latter as a 422.
"""

from __future__ import annotations

import uuid


class InvalidUUID(str):
    """A path segment that should have been a UUID."""


class LenientUUIDConverter:
    regex = "[^/]+"

    def to_python(self, value: str) -> uuid.UUID | InvalidUUID:
        try:
            return uuid.UUID(value)
        except ValueError:
            return InvalidUUID(value)

    def to_url(self, value) -> str:
        return str(value)
