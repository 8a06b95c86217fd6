"""Logging with a request id on every line, a JSON formatter for production, and no raw control
characters in any line.

A client chooses much of what is logged (the request line, headers, field values). Both formatters
escape control characters (C0, DEL, C1 and the Unicode line separators) as `\\n`, `\\r`, `\\t` or
`\\xNN`/`\\uNNNN`, so a request can neither forge a log line nor send escape sequences to the
terminal that shows it (see docs/operations.md#logs).
"""

from __future__ import annotations

import json
import logging
from contextvars import ContextVar
from datetime import UTC, datetime

request_id_var: ContextVar[str] = ContextVar("request_id", default="-")

_CONTROL = [*range(0x20), 0x7F, *range(0x80, 0xA0), 0x2028, 0x2029]
_ESCAPES = {ord("\n"): "\\n", ord("\r"): "\\r", ord("\t"): "\\t"}
_ESCAPE_ALL = {c: _ESCAPES.get(c, f"\\x{c:02x}" if c < 0x100 else f"\\u{c:04x}") for c in _CONTROL}
# A traceback's own line breaks stay (Python wrote them); anything else inside it is escaped.
_ESCAPE_IN_TRACEBACK = {c: e for c, e in _ESCAPE_ALL.items() if c != ord("\n")}


def escape_controls(text: str) -> str:
    """`text` with every control character written as an escape (one line, nothing for a terminal)."""
    return text.translate(_ESCAPE_ALL)


class RequestIdFilter(logging.Filter):
    """Adds `request_id` to every record: the current request's, or "-" outside one."""

    def filter(self, record: logging.LogRecord) -> bool:
        record.request_id = request_id_var.get()
        return True


class PlainFormatter(logging.Formatter):
    """logging.Formatter with the message escaped (escape_controls); a traceback keeps its lines."""

    def formatMessage(self, record: logging.LogRecord) -> str:
        record.message = escape_controls(record.message)
        return super().formatMessage(record)

    def formatException(self, ei) -> str:
        return super().formatException(ei).translate(_ESCAPE_IN_TRACEBACK)

    def formatStack(self, stack_info: str) -> str:
        return super().formatStack(stack_info).translate(_ESCAPE_IN_TRACEBACK)


class JsonFormatter(logging.Formatter):
    """One JSON object per line: time, level, logger, message, request_id, and any `extra` fields.
    Every string is escaped (escape_controls) before JSON encoding, so DEL, C1 and U+2028, which JSON
    leaves raw, are escaped too."""

    _standard = set(vars(logging.LogRecord("", 0, "", 0, "", None, None))) | {"message", "asctime", "request_id"}

    def format(self, record: logging.LogRecord) -> str:
        entry = {
            "time": datetime.fromtimestamp(record.created, tz=UTC).isoformat(timespec="milliseconds"),
            "level": record.levelname,
            "logger": record.name,
            "message": escape_controls(record.getMessage()),
            "request_id": escape_controls(str(getattr(record, "request_id", "-"))),
        }
        for key, value in vars(record).items():
            if key not in self._standard and not key.startswith("_"):
                if isinstance(value, str):
                    value = escape_controls(value)
                elif not isinstance(value, int | float | bool | type(None)):
                    value = escape_controls(repr(value))
                entry[escape_controls(key)] = value
        if record.exc_info:
            entry["exc_info"] = self.formatException(record.exc_info).translate(_ESCAPE_IN_TRACEBACK)
        return json.dumps(entry, ensure_ascii=False)
