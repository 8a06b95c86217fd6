"""schemathesis hooks for every run the suite makes (SCHEMATHESIS_HOOKS, see tests/support/servers.py).

A client sends a fresh Idempotency-Key for each distinct request and the same key only to retry that
request (docs/guide.md#retries). Generated data reuses example values, which would make every later request
with the same key a 422 `idempotency_key_reused`; so a key that is itself valid is replaced by a fresh one,
as a real client's would be. Invalid keys (too long, bad characters) are sent as generated.

A list's `cursor` is a token the server issues (`next_cursor`, or the `Link` header of a bare-array list), as
opaque to a client as a path id: a client sends back one it was given, never one it made up, and the server
refuses any other with a 422 the schema can describe but not predict (docs/decisions.md#lists). So a
generated cursor that the schema allows is left out, as a client starting at the first page would; one the
schema refuses (too long, not a string) is sent as generated. Without it, an operation reached by the
stateful phase with a real parent id answers mostly 422s to generated cursors, which reads as a schema that
says less than the server checks.

A task's deadline must be in the future, a rule on the clock that JSON Schema cannot state: a client posts a
future one, so a generated deadline that is a valid date-time in the past is moved a month ahead of now when a
task is posted or remixed. Without it most generated tasks are refused (422), and the stateful phase, which
follows the schema's links from a new task to its bids (config/schema_links.py), seldom gets a task to
follow. Deadlines that are not date-times are sent as generated. A publication's `scheduled_at` is the same
kind of rule (a minute to a year ahead): a generated date-time there is moved a day ahead of now.

The task list's search has rules between two parameters that JSON Schema cannot state (docs/decisions.md#task-search):
`max_budget` not below `min_budget`, `deadline_before` not before `deadline_after`, `sort=relevance` only with
`q`. A client sends bounds in their order, so generated bounds that are each valid are put in order, and a
`relevance` sort without a text query is left out; values the schema refuses are sent as generated.

The URL fields' pattern (core.api.fields.URL_PATTERN) bounds the host name with a lookahead, which
schemathesis's coverage phase can only satisfy by searching: minutes per URL field (one operation with two
such fields took over 240 s, most of a ten-minute part of the run). The fuzzer is given the same pattern
without the lookahead and with at most two labels before the top-level domain: every URL it matches also
matches the server's (a host of at most 191 characters), so valid data stays valid, and the run finishes in
seconds. The server checks whatever URL it is sent as before; negative cases still reach it.

JSON numbers that a double cannot hold (`1e400`, `-1E+999`), or that it holds only at its edges (`1e308`,
`5e-324`), are what hypothesis's floats never produce (it generates finite doubles, which `json.dumps`
writes in their shortest form). The JSON serializer below writes one number of every fifth body that has
numbers as such a literal, chosen by the body's own text so a run is repeatable: the server must answer
each with a documented 4xx (`json_invalid` for the first two, docs/decisions.md#errors), never a 500.
"""

from __future__ import annotations

import hashlib
import json
import re
import uuid
from datetime import UTC, datetime, timedelta
from decimal import Decimal

import schemathesis
from schemathesis.transport.serialization import serialize_json

from tests.support.schemathesis_patterns import url_pattern_for_fuzzing

# core.http.idempotency's PATTERN and MAX_LENGTH (this module runs in schemathesis's process, without Django).
PATTERN = r"^[!-~]([ -~]*[!-~])?$"
MAX_LENGTH = 255
CURSOR_MAX_CHARS = 512  # core.api.pagination's
_VALID_KEY = re.compile(PATTERN)
# The operations whose body has a task's `deadline`.
DEADLINES = {("POST", "/api/v1/tasks"), ("POST", "/api/v1/tasks/{task_id}/remix")}
SCHEDULES = {("POST", "/api/v1/brands/{brand_id}/publications")}


def _rewrite_patterns(node) -> None:
    if isinstance(node, dict):
        if isinstance(node.get("pattern"), str):
            node["pattern"] = url_pattern_for_fuzzing(node["pattern"])
        for value in node.values():
            _rewrite_patterns(value)
    elif isinstance(node, list):
        for value in node:
            _rewrite_patterns(value)


@schemathesis.hook
def before_load_schema(ctx, raw_schema):
    # Requests only: a response is still checked against the pattern the server documents.
    for name, schema in raw_schema.get("components", {}).get("schemas", {}).items():
        if name.endswith("Request"):
            _rewrite_patterns(schema)
    for operations in raw_schema.get("paths", {}).values():
        for operation in operations.values() if isinstance(operations, dict) else ():
            if isinstance(operation, dict):
                _rewrite_patterns(operation.get("parameters", []))
                _rewrite_patterns(operation.get("requestBody", {}))


@schemathesis.hook
def before_call(ctx, case, **kwargs):
    headers = case.headers or {}
    for name in list(headers):
        if name.lower() == "idempotency-key" and _valid_key(headers[name]):
            headers[name] = str(uuid.uuid4())
    query = case.query if isinstance(case.query, dict) else {}
    if isinstance(query.get("cursor"), str) and len(query["cursor"]) <= CURSOR_MAX_CHARS:
        del query["cursor"]
    body = case.body
    operation = (case.operation.method.upper(), case.operation.path)
    if operation == ("GET", "/api/v1/tasks"):
        _search_in_order(query)
    if operation in DEADLINES and isinstance(body, dict) and _past(body.get("deadline")):
        body["deadline"] = (datetime.now(UTC) + timedelta(days=30)).strftime("%Y-%m-%dT%H:%M:%SZ")
    if operation in SCHEDULES and isinstance(body, dict) and _moment(body.get("scheduled_at")) is not None:
        body["scheduled_at"] = (datetime.now(UTC) + timedelta(days=1)).strftime("%Y-%m-%dT%H:%M:%SZ")
    return None


def _search_in_order(query: dict) -> None:
    """The task search's bounds in order, and no `relevance` sort without `q` (the module's docstring)."""
    for low, high, read in (("min_budget", "max_budget", _amount), ("deadline_after", "deadline_before", _moment)):
        first, second = read(query.get(low)), read(query.get(high))
        if first is not None and second is not None and second < first:
            query[low], query[high] = query[high], query[low]
    if query.get("sort") == "relevance" and not str(query.get("q") or "").strip():
        del query["sort"]


def _amount(value) -> Decimal | None:
    return Decimal(value) if isinstance(value, str) and re.fullmatch(r"[0-9]{1,10}(\.[0-9]{1,2})?", value) else None


def _moment(value) -> datetime | None:
    """`value` as an aware date-time, or None when it is not one."""
    if not isinstance(value, str):
        return None
    try:
        moment = datetime.fromisoformat(value)
    except ValueError:
        return None
    return moment if moment.tzinfo is not None else None


def _past(value) -> bool:
    moment = _moment(value)
    return moment is not None and moment < datetime.now(UTC)


def _valid_key(value) -> bool:
    return isinstance(value, str) and len(value) <= MAX_LENGTH and bool(_VALID_KEY.match(value))


# Number literals hypothesis never writes: beyond a double's range, and at its edges.
HUGE_NUMBERS = ("1e400", "-1E+999", "1e308", "-1.7976931348623157e308", "5e-324", "1e-400", "9" * 400)
HUGE_EVERY = 5  # one body in this many, of those that carry a number
_SENTINEL = "\u0000huge-number\u0000"


def _numbers(node, path=()):
    """The paths of the numeric leaves of a JSON value (booleans are not numbers here)."""
    if isinstance(node, dict):
        for key, value in node.items():
            yield from _numbers(value, (*path, key))
    elif isinstance(node, list):
        for index, value in enumerate(node):
            yield from _numbers(value, (*path, index))
    elif isinstance(node, int | float) and not isinstance(node, bool):
        yield path


def _replaced(node, path, value):
    if not path:
        return value
    head, rest = path[0], path[1:]
    if isinstance(node, dict):
        return {**node, head: _replaced(node[head], rest, value)}
    return [_replaced(item, rest, value) if index == head else item for index, item in enumerate(node)]


def with_huge_number(body) -> bytes | None:
    """`body` as JSON with one of its numbers written as a HUGE_NUMBERS literal, or None when this body keeps
    its numbers (it has none, or it is not one of the HUGE_EVERY)."""
    numbers = list(_numbers(body))
    if not numbers:
        return None
    text = json.dumps(body, sort_keys=True)
    digest = int.from_bytes(hashlib.sha256(text.encode()).digest()[:8], "big")
    if digest % HUGE_EVERY:
        return None
    path = numbers[(digest // HUGE_EVERY) % len(numbers)]
    literal = HUGE_NUMBERS[(digest // HUGE_EVERY // len(numbers)) % len(HUGE_NUMBERS)]
    return json.dumps(_replaced(body, path, _SENTINEL)).replace(json.dumps(_SENTINEL), literal).encode()


@schemathesis.serializer("application/json")
def json_with_huge_numbers(ctx, value) -> bytes:
    if isinstance(value, dict | list):
        mutated = with_huge_number(value)
        if mutated is not None:
            return mutated
    plain = serialize_json(value)  # schemathesis's own JSON serializer, for every other body
    return plain["data"] if "data" in plain else json.dumps(plain["json"]).encode()
