"""JSON body parsing whose failures speak the 422 contract (`json_invalid` at a character offset)."""

from __future__ import annotations

import json
import math
import re
import sys

from django.conf import settings
from rest_framework import parsers

from core.api.validation import RequestValidationError, error
from core.http.errors import PayloadTooLarge


class JSONParser(parsers.JSONParser):
    def parse(self, stream, media_type=None, parser_context=None):
        parser_context = parser_context or {}
        encoding = parser_context.get("encoding", settings.DEFAULT_CHARSET)
        # DRF reads the request as a stream, which bypasses Django's DATA_UPLOAD_MAX_MEMORY_SIZE check.
        limit = settings.DATA_UPLOAD_MAX_MEMORY_SIZE
        raw = b"" if stream is None else stream.read() if limit is None else stream.read(limit + 1)
        if limit is not None and len(raw) > limit:
            raise PayloadTooLarge()
        if not raw.strip():
            return {}  # no body: every required field is then reported as missing
        try:
            text = raw.decode(encoding)
        except UnicodeDecodeError as exc:
            raise RequestValidationError(
                [error("json_invalid", ["body", exc.start], "JSON decode error", {}, {"error": "Invalid UTF-8"})]
            ) from exc
        too_deep = _too_deep(text)
        if too_deep is not None:
            raise RequestValidationError(
                [
                    error(
                        "json_invalid",
                        ["body", too_deep],
                        "JSON decode error",
                        {},
                        {"error": f"nesting deeper than {MAX_DEPTH} levels"},
                    )
                ]
            )
        try:
            data = json.loads(
                text, parse_constant=_reject_constant, parse_float=_finite_float, parse_int=_double_sized_int
            )
        except _OutOfRange as exc:
            raise RequestValidationError(
                [error("json_invalid", ["body", text.find(exc.literal)], "JSON decode error", {}, {"error": str(exc)})]
            ) from exc
        except RecursionError as exc:  # a backstop: _too_deep should have refused it already
            raise RequestValidationError(
                [error("json_invalid", ["body", 0], "JSON decode error", {}, {"error": "nesting too deep"})]
            ) from exc
        except ValueError as exc:
            position = getattr(exc, "pos", 0)
            reason = getattr(exc, "msg", str(exc))
            raise RequestValidationError(
                [error("json_invalid", ["body", position], "JSON decode error", {}, {"error": reason})]
            ) from exc
        problem = _unstorable_text(text)
        if problem:
            position, reason = problem
            raise RequestValidationError(
                [error("json_invalid", ["body", position], "JSON decode error", {}, {"error": reason})]
            )
        return data


# How deeply arrays and objects may nest. json.loads recurses once per level, so a body of 50,000 `[`
# would otherwise end in RecursionError (a 500); no request of this API nests more than a few levels.
MAX_DEPTH = 64
_STRING = re.compile(r'"(?:[^"\\]|\\.)*"', re.DOTALL)
_BRACKET = re.compile(r"[\[\]{}]")


def _too_deep(text: str) -> int | None:
    """The offset where nesting passes MAX_DEPTH, or None. Linear, and never recursive.

    Brackets inside strings do not count: strings are blanked (same length, so offsets hold) first.
    An unterminated string leaves its quote in place, which is harmless: json.loads refuses it anyway.
    """
    if text.count("[") + text.count("{") <= MAX_DEPTH:
        return None  # the common case: too few brackets to be too deep at all
    blanked = _STRING.sub(lambda m: " " * len(m.group()), text)
    depth = 0
    for match in _BRACKET.finditer(blanked):
        if match.group() in "[{":
            depth += 1
            if depth > MAX_DEPTH:
                return match.start()
        else:
            depth -= 1
    return None


# `\u0000` cannot be stored in PostgreSQL text or jsonb, and a lone UTF-16 surrogate is not a
# character at all (Pydantic's own JSON parser refuses it too). Both are refused up front.
_NUL_ESCAPE = re.compile(r"(?<!\\)(?:\\\\)*\\u0000")
_SURROGATE_ESCAPE = re.compile(r"(?<!\\)(?:\\\\)*\\u[dD][89a-fA-F][0-9a-fA-F]{2}(?:\\u[dD][c-fC-F][0-9a-fA-F]{2})?")


def _unstorable_text(text: str) -> tuple[int, str] | None:
    nul = _NUL_ESCAPE.search(text)
    if nul:
        return nul.end() - 6, "NUL characters (\\u0000) are not allowed"
    for match in _SURROGATE_ESCAPE.finditer(text):
        codes = [int(part[:4], 16) for part in match.group().split("\\u")[1:]]
        if not (len(codes) == 2 and codes[0] <= 0xDBFF <= codes[1]):
            return match.start() + match.group().index("\\u"), "lone surrogate in hex escape"
    return None


def _reject_constant(name: str):
    # NaN and Infinity are not JSON; Python's parser accepts them unless told otherwise.
    raise ValueError(f"Expecting value: {name} is not valid JSON")


class _OutOfRange(ValueError):
    def __init__(self, literal: str) -> None:
        super().__init__(f"number out of range: {literal[:32]}")
        self.literal = literal


def _finite_float(literal: str) -> float:
    # `1e400` is valid JSON that a double cannot hold: Python reads it as inf, which no field accepts and no
    # JSON answer can carry (a 422 echoing it could not be rendered), so it is refused where it stands.
    value = float(literal)
    if math.isinf(value):
        raise _OutOfRange(literal)
    return value


def _double_sized_int(literal: str) -> int:
    # An integer literal past a double's range (400 nines) is as meaningless here as 1e400, and a float field
    # given it would fail converting it (OverflowError, a 500): refused the same way.
    value = int(literal)
    if abs(value) > sys.float_info.max:
        raise _OutOfRange(literal)
    return value
