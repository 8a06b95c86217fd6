"""OpenAPI generation: the error responses and rate-limit headers every operation shares."""

from __future__ import annotations

import re

from drf_spectacular import openapi
from drf_spectacular.drainage import has_override
from drf_spectacular.plumbing import append_meta, force_instance, get_doc
from drf_spectacular.utils import OpenApiParameter, OpenApiResponse
from rest_framework import serializers

from core.api.validation import GreaterThan
from core.http import idempotency
from core.http.access import Access

ERROR_REF = {"$ref": "#/components/schemas/Error"}
VALIDATION_ERROR_REF = {"$ref": "#/components/schemas/HTTPValidationError"}

ERROR_COMPONENTS = {
    "Error": {
        "type": "object",
        "description": "Every error other than a validation error.",
        "properties": {
            "detail": {"type": "string", "description": "A sentence for humans."},
            "code": {"type": "string", "description": "A stable snake_case code for programs."},
        },
        "required": ["detail", "code"],
    },
    "ValidationErrorItem": {
        "type": "object",
        "properties": {
            "loc": {"type": "array", "items": {"anyOf": [{"type": "string"}, {"type": "integer"}]}},
            "msg": {"type": "string"},
            "type": {"type": "string"},
            "input": {},
            "ctx": {"type": "object"},
        },
        "required": ["loc", "msg", "type"],
    },
    "HTTPValidationError": {
        "type": "object",
        "properties": {"detail": {"type": "array", "items": {"$ref": "#/components/schemas/ValidationErrorItem"}}},
        "required": ["detail"],
    },
}

_RATE_LIMIT_HEADERS = {
    "X-RateLimit-Limit": {"schema": {"type": "integer"}, "description": "Cap per window for this path."},
    "X-RateLimit-Remaining": {"schema": {"type": "integer"}, "description": "Requests left in this window."},
    "X-RateLimit-Reset": {"schema": {"type": "integer"}, "description": "Unix time when the window resets."},
}
_RETRY_AFTER = {"Retry-After": {"schema": {"type": "integer"}, "description": "Seconds until the window resets."}}
_RETRY_AFTER_503 = {
    "Retry-After": {
        "schema": {"type": "integer"},
        "description": "With `database_busy` / `database_unavailable`: seconds to wait before retrying.",
    }
}
# Any operation may meet a database that is busy or restarting (core.db.dberrors): a 503, never a 500.
DATABASE_503 = (
    "The database is busy (`database_busy`) or cannot be reached (`database_unavailable`); nothing was "
    "changed. Retry after `Retry-After` seconds."
)

IDEMPOTENCY_KEY_PARAMETER = OpenApiParameter(
    idempotency.HEADER,
    type={"type": "string", "minLength": 1, "maxLength": idempotency.MAX_LENGTH, "pattern": idempotency.PATTERN},
    location=OpenApiParameter.HEADER,
    required=False,
    description=(
        "Makes a retry safe: the first response (2xx, or a 4xx other than 422 and 429) is stored for 24 hours "
        "for your user and this key, and the same request with the same key gets it again, with "
        "`Idempotent-Replayed: true`, without running twice. The same key on a different request (method, path "
        "or body) is a 422 `idempotency_key_reused`; while the first is still running, a 409 "
        "`idempotency_in_progress`. A 422, 429 or 5xx is not stored: retrying with the key runs the request."
    ),
)
_IDEMPOTENT_REPLAYED = {
    idempotency.REPLAYED_HEADER: {
        "schema": {"type": "string", "enum": ["true"]},
        "description": "Present when this is the stored response of an earlier request with the same Idempotency-Key.",
    }
}
_LOCATION = {
    "Location": {
        "schema": {"type": "string", "format": "uri"},
        "required": True,
        "description": "The new resource's URL (or, for one without a URL of its own, the list that shows it).",
    }
}
_IN_PROGRESS = "`idempotency_in_progress`: a request with this Idempotency-Key is still running."


CSV_EXPORT = {
    "type": "string",
    "description": "With `Accept: text/csv`: a header row, then one row per item, as a download "
    "(`Content-Disposition: attachment`); nested values as JSON, a cell that would start a spreadsheet "
    "formula after an apostrophe.",
}


def _merged(schema: dict, extra: dict) -> dict:
    """`extra` over `schema`, recursing into objects (so `properties: {x: {examples: [...]}}` adds to x)."""
    out = dict(schema)
    for key, value in extra.items():
        out[key] = _merged(out[key], value) if isinstance(value, dict) and isinstance(out.get(key), dict) else value
    return out


def error_response(description: str) -> OpenApiResponse:
    """For `@extend_schema(responses={409: error_response("...")})` on views."""
    return OpenApiResponse(response=ERROR_REF, description=description)


# Money (docs/decisions.md#money): a decimal string out, a decimal string or a JSON number in.
MONEY_OUT_PATTERN = r"^-?[0-9]{1,10}\.[0-9]{2}$"
MONEY_OUT = 'Money in major units: a decimal string with two decimals, e.g. "12.50".'
MONEY_IN = (
    'Money in major units, at most 2 decimals: a decimal string such as "12.50" (exact, preferred) or a JSON number.'
)


def _money_in_pattern(field: serializers.DecimalField) -> str:
    """A decimal string the field takes: above 0 and at most `max_value` when it says so, at most 2 decimals."""
    above_zero = any(isinstance(v, GreaterThan) and v.limit_value == 0 for v in field.validators)
    top = field.max_value
    if above_zero and top is not None and top == int(top):
        digits = len(str(int(top))) - 1
        return (
            rf"^(?:0\.(?:0[1-9]|[1-9][0-9]?)|[1-9][0-9]{{0,{digits - 1}}}(?:\.[0-9]{{1,2}})?"
            rf"|{int(top)}(?:\.00?)?)$"
        )
    return r"^-?[0-9]{1,10}(?:\.[0-9]{1,2})?$"


def money_schema(field: serializers.DecimalField, direction: str) -> dict:
    if direction == "response":
        return {"type": "string", "format": "decimal", "pattern": MONEY_OUT_PATTERN, "description": MONEY_OUT}
    number: dict = {"type": "number", "multipleOf": 0.01}
    if any(isinstance(v, GreaterThan) and v.limit_value == 0 for v in field.validators):
        number["exclusiveMinimum"] = 0
    if field.max_value is not None:
        number["maximum"] = _plain_number(field.max_value)
    if field.min_value is not None:
        number["minimum"] = _plain_number(field.min_value)
    text = {"type": "string", "format": "decimal", "pattern": _money_in_pattern(field)}
    return {"oneOf": [text, number], "description": MONEY_IN}


def _plain_number(value):
    return int(value) if value == int(value) else float(value)


class AutoSchema(openapi.AutoSchema):
    def _map_serializer_field(self, field, direction, bypass_extensions=False):
        if isinstance(field, serializers.DecimalField) and not has_override(field, "field"):
            schema = money_schema(field, direction)
            meta = self._get_serializer_field_meta(field, direction)
            if meta.get("description"):
                meta["description"] = f"{schema['description']} {meta['description']}"
            return append_meta(schema, meta)
        return super()._map_serializer_field(field, direction, bypass_extensions)

    def _map_basic_serializer(self, serializer, direction):
        schema = super()._map_basic_serializer(serializer, direction)
        serializer = force_instance(serializer)
        if direction == "response":
            # Every field a serializer renders is in every response (DRF leaves out only a field declared
            # `required=False` whose attribute is missing), so the schema says `required` (nullable stays).
            declared = getattr(serializer, "_declared_fields", {})
            always = [
                name
                for name, field in serializer.fields.items()
                if name in schema.get("properties", {})
                and not (name in declared and field._kwargs.get("required") is False)
            ]
            if always:
                schema["required"] = [
                    *schema.get("required", []),
                    *(n for n in always if n not in schema.get("required", [])),
                ]
        elif not getattr(serializer, "extra_allowed", False):
            schema["additionalProperties"] = False  # an unknown field is a 422 (docs/decisions.md#errors)
        return schema

    def get_description(self) -> str:
        """The method's docstring, else the view class's own: never one inherited from a base class, which
        describes the base (drf-spectacular would otherwise walk the MRO)."""
        method = getattr(self.view, getattr(self.view, "action", None) or self.method.lower(), None)
        own = type(self.view).__dict__.get("__doc__")
        return get_doc(method) or (get_doc(type(self.view)) if own else "")

    def _map_serializer(self, serializer, direction, bypass_extensions=False):
        """A serializer's `openapi_extra` (rules across fields, e.g. `anyOf`) joins its component's schema."""
        schema = super()._map_serializer(serializer, direction, bypass_extensions)
        extra = getattr(serializer, "openapi_extra", None)
        if extra and direction == "request":
            schema = _merged(schema, extra)
        return schema

    def _get_request_for_media_type(self, serializer, direction="request"):
        """A body is required when the server refuses one without it: drf-spectacular looks only at the
        fields' `required`, so a serializer whose `openapi_extra` requires a field in every branch of its
        `anyOf`/`oneOf` makes its body required too (docs/decisions.md#api-documents)."""
        schema, required = super()._get_request_for_media_type(serializer, direction)
        extra = getattr(force_instance(serializer), "openapi_extra", None) or {}
        branches = extra.get("anyOf") or extra.get("oneOf") or []
        return schema, required or (bool(branches) and all(branch.get("required") for branch in branches))

    def _access(self) -> Access | None:
        return getattr(self.view, "access", None)

    def _is_rate_limited(self) -> bool:
        return not self.path.startswith("/health")

    def _is_idempotent(self) -> bool:
        """The view method carries `@idempotent` (core.http.idempotency): it takes an `Idempotency-Key`."""
        return idempotency.is_idempotent(getattr(self.view, self.method.lower(), None))

    def get_override_parameters(self):
        parameters = super().get_override_parameters()
        if self._is_idempotent():
            parameters = [*parameters, IDEMPOTENCY_KEY_PARAMETER]
        return parameters

    def _get_response_bodies(self, direction="response"):
        responses = super()._get_response_bodies(direction)
        access = self._access()
        standard = {}
        if access is not None and access is not Access.PUBLIC:
            standard["401"] = ("Missing, invalid, expired or revoked credentials.", ERROR_REF)
            standard["403"] = ("The credentials may not be used here (API key or staff rules).", ERROR_REF)
        if "{" in self.path:
            standard["404"] = ("No such object, or not yours.", ERROR_REF)
        if self.method in ("POST", "PUT", "PATCH"):
            standard["413"] = ("The request body is too large.", ERROR_REF)
            standard["415"] = ("The request body is not JSON.", ERROR_REF)
        standard["422"] = ("Validation error.", VALIDATION_ERROR_REF)
        if self._is_idempotent():
            standard["409"] = (_IN_PROGRESS, ERROR_REF)
            standard["422"] = (
                "Validation error; also a malformed Idempotency-Key, or one used before for a different request "
                "(`idempotency_key_reused`).",
                VALIDATION_ERROR_REF,
            )
            if "409" in responses:
                responses["409"]["description"] = f"{responses['409'].get('description', '')} Or {_IN_PROGRESS}".strip()
        standard["429"] = ("Rate limit exceeded. Try again later.", ERROR_REF)
        if self._is_rate_limited():  # /health answers its own 503 with the failing check
            standard["503"] = (DATABASE_503, ERROR_REF)
        for code, (description, ref) in standard.items():
            if code not in responses:
                responses[code] = {
                    "description": description,
                    "content": {"application/json": {"schema": ref}},
                    **self._headers_block(code),
                }
            elif code == "503":  # the view's own 503 (a provider that is unavailable), and the database's
                responses[code]["description"] = f"{responses[code]['description']} Or: {DATABASE_503}"
        for code, response in responses.items():
            content = response.get("content", {})
            if "text/csv" not in content:
                continue
            if code.startswith("2"):  # the export: text, one row per item (docs/decisions.md#csv-exports)
                content["text/csv"] = {"schema": CSV_EXPORT}
            else:  # errors are JSON whatever was accepted
                del content["text/csv"]
        return responses

    def _headers_block(self, code: str) -> dict:
        headers = self._get_response_headers_for_code(code)
        return {"headers": headers} if headers else {}

    def _get_response_headers_for_code(self, status_code, direction="response"):
        headers = super()._get_response_headers_for_code(status_code, direction)
        if self._is_rate_limited():
            headers = {**_RATE_LIMIT_HEADERS, **headers}
            if str(status_code) == "429":
                headers = {**headers, **_RETRY_AFTER}
            if str(status_code) == "503":
                headers = {**headers, **_RETRY_AFTER_503}
        code = str(status_code)
        if code == "201":
            headers = {**headers, **_LOCATION}
        if self._is_idempotent() and code.isdigit() and idempotency.is_stored_status(int(code)):
            headers = {**headers, **_IDEMPOTENT_REPLAYED}
        return headers


def mark_public_operations(result, generator, request, public):
    """Public operations say so explicitly with `security: []`; the rest require the bearer scheme."""
    for path_item in result.get("paths", {}).values():
        for operation in path_item.values():
            if not isinstance(operation, dict):
                continue
            security = operation.get("security")
            if not security or security == [{}]:
                operation["security"] = []
    components = result.setdefault("components", {})
    components.setdefault("schemas", {}).update(ERROR_COMPONENTS)
    return result


_CHOICE_LINE = re.compile(r"^\* `(?P<value>[^`]*)` - (?P<label>.*)$")


def _without_plain_choice_list(description: str) -> str:
    """`description` less drf-spectacular's list of choices (its last paragraph, or all of it, in lines such
    as "* `usd` - usd") when every label only repeats its value."""
    head, _, tail = description.rpartition("\n\n")
    lines = [_CHOICE_LINE.match(line) for line in tail.split("\n")]
    if all(lines) and all(_letters(line["label"]) == _letters(line["value"]) for line in lines):
        return head
    return description


def _letters(text: str) -> str:
    return re.sub(r"[\W_]+", "", text.lower())


def drop_plain_choice_lists(result, generator, request, public):
    """An enum's description lists its values' labels only when some label says more than its value."""

    def visit(node):
        if isinstance(node, dict):
            if isinstance(node.get("description"), str) and "* `" in node["description"]:
                node["description"] = _without_plain_choice_list(node["description"])
                if not node["description"]:
                    del node["description"]
            for value in node.values():
                visit(value)
        elif isinstance(node, list):
            for value in node:
                visit(value)

    visit(result)
    return result


def add_servers_and_contact(result, generator, request, public):
    """`servers` is the origin the schema was fetched from, so generated clients call this very server."""
    if request is not None:
        origin = request.build_absolute_uri("/").rstrip("/")
        result["servers"] = [{"url": origin, "description": "This server"}]
        # New dicts, never the shared ones: core.api.openapi_view keeps one generated document per process.
        result["info"] = {
            **result["info"],
            "contact": {**result["info"].get("contact", {}), "url": f"{origin}/docs/guide"},
        }
    return result
