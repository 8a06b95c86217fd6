"""Request validation that answers in FastAPI/Pydantic v2's 422 shape (docs/decisions.md#errors).

Input is parsed with ordinary DRF serializers. When one is invalid, its errors are translated
here, field by field, into Pydantic's error types, message templates and `ctx`, with `loc`
starting at "body", "query" or "path". The translation reads the serializer's own fields for the
limits that go into `ctx`, so a field declared once gives both the check and the message.

Rules of our own (in `validate_<field>` or `validate`) raise `ValidationError(msg, code="<rule>")`
with a code other than DRF's "invalid"; they come out as Pydantic's `value_error`.

A body field the serializer does not declare is Pydantic's `extra_forbidden` (`extra="forbid"`), at any
depth of nested objects, reported together with the other problems (see docs/decisions.md#errors).

Sizes come first: a list longer than its field's `max_length` (DRF's ListField would validate every
item before looking at the length) or a string longer than its `max_length` is refused before any
item or validator runs, and an error's `input` is at most INPUT_ECHO_MAX_CHARS characters of what was
sent (see docs/decisions.md#errors).
"""

from __future__ import annotations

import uuid
from collections.abc import Mapping
from decimal import Decimal
from typing import Any

from django.core.validators import BaseValidator
from rest_framework import fields, serializers
from rest_framework.exceptions import ErrorDetail

_MISSING = object()

# The most of a client's input one 422 error echoes back (characters of its JSON, roughly): a string is
# cut to a prefix, a list or object to its first items (see docs/decisions.md#errors).
INPUT_ECHO_MAX_CHARS = 500


class RequestValidationError(Exception):
    """Raised with a list of Pydantic-shaped error dicts; rendered as 422 `{"detail": [...]}`."""

    def __init__(self, errors: list[dict[str, Any]]):
        self.errors = errors
        super().__init__(errors)


def error(type_: str, loc: list, msg: str, input_: Any = _MISSING, ctx: dict | None = None) -> dict[str, Any]:
    item: dict[str, Any] = {"type": type_, "loc": loc, "msg": msg}
    if input_ is not _MISSING:
        item["input"] = _echo(input_, [INPUT_ECHO_MAX_CHARS])
    if ctx:
        item["ctx"] = ctx
    return item


def _jsonable(value: Any) -> Any:
    if isinstance(value, Mapping):
        if hasattr(value, "lists"):  # QueryDict: keep single values single
            return {k: (v[0] if len(v) == 1 else v) for k, v in value.lists()}
        return {str(k): _jsonable(v) for k, v in value.items()}
    if isinstance(value, list | tuple):
        return [_jsonable(v) for v in value]
    if isinstance(value, uuid.UUID | Decimal):
        return str(value)
    return value


def _echo(value: Any, budget: list[int]) -> Any:
    """`_jsonable(value)` cut down to what `budget[0]` characters allow: the prefix of a string, the
    first items of a list or object. Never walks more of the input than it returns."""
    if isinstance(value, str):
        kept = value[: max(budget[0], 0)]
        budget[0] -= len(kept) + 2
        return kept
    if isinstance(value, Mapping):
        pairs = value.lists() if hasattr(value, "lists") else value.items()
        out: dict[str, Any] = {}
        budget[0] -= 2
        for key, item in pairs:
            if budget[0] <= 0:
                break
            key = str(key)[: max(budget[0], 0)]
            budget[0] -= len(key) + 4
            if hasattr(value, "lists"):  # QueryDict: keep single values single
                item = item[0] if len(item) == 1 else item
            out[key] = _echo(item, budget)
        return out
    if isinstance(value, list | tuple):
        items: list[Any] = []
        budget[0] -= 2
        for item in value:
            if budget[0] <= 0:
                break
            items.append(_echo(item, budget))
            budget[0] -= 2
        return items
    value = _jsonable(value)
    budget[0] -= len(str(value))
    return value


# --- Sizes and strings before anything else -------------------------------------------------------


def _refused_first(serializer: serializers.Serializer, data: Any, loc: list) -> dict[str, list[dict[str, Any]]]:
    """Errors of the fields refused before the serializer looks at them, by field name: a list or string (at
    any depth) over its `max_length`, or a JSON number where a string belongs (DRF's CharField would store
    `123` as "123"; Pydantic's strict `str` refuses it, and so does the schema)."""
    found: dict[str, list[dict[str, Any]]] = {}
    if not isinstance(data, Mapping):
        return found
    for name, field in serializer.fields.items():
        if field.read_only:
            continue
        value = _get(data, name, field)
        if value is _MISSING:
            continue
        errors = _refused_first_value(field, value, [*loc, name])
        if errors:
            found[name] = errors
    return found


def _refused_first_value(field: fields.Field, value: Any, loc: list) -> list[dict[str, Any]]:
    if isinstance(field, fields.ListField | serializers.ListSerializer) and isinstance(value, list):
        if field.max_length is not None and len(value) > field.max_length:
            return [_list_length_error("too_long", field.max_length, value, loc)]
        out: list[dict[str, Any]] = []
        for index, item in enumerate(value):
            out.extend(_refused_first_value(field.child, item, [*loc, index]))
        return out
    if isinstance(field, serializers.Serializer):
        return [e for errors in _refused_first(field, value, loc).values() for e in errors]
    if isinstance(field, fields.CharField) and isinstance(value, int | float | Decimal) and not isinstance(value, bool):
        return [error("string_type", loc, "Input should be a valid string", value)]
    if isinstance(field, fields.CharField) and isinstance(value, str) and field.max_length is not None:
        n = field.max_length
        if len(value) > n and len(value.strip() if field.trim_whitespace else value) > n:
            return [
                error(
                    "string_too_long",
                    loc,
                    f"String should have at most {n} character{_plural(n)}",
                    value,
                    {"max_length": n},
                )
            ]
    return []


def _without(data: Any, names) -> Any:
    """A shallow copy of the request data without the named fields."""
    if hasattr(data, "lists"):  # QueryDict
        copy = data.copy()
        for name in names:
            copy.pop(name, None)
        return copy
    return {key: value for key, value in data.items() if key not in names}


# --- Validators whose limits are exclusive (Pydantic's gt / lt) --------------------------------


class GreaterThan(BaseValidator):
    message = "Input should be greater than %(limit_value)s"
    code = "greater_than"

    def compare(self, a, b):
        return not a > b


class LessThan(BaseValidator):
    message = "Input should be less than %(limit_value)s"
    code = "less_than"

    def compare(self, a, b):
        return not a < b


# --- Translation ----------------------------------------------------------------------------------


def validate(
    serializer_class: type[serializers.Serializer],
    data: Any,
    *,
    loc: str,
    context: dict | None = None,
    partial: bool = False,
    instance: Any = None,
) -> dict[str, Any]:
    """Validate `data` with the serializer; return `validated_data` or raise RequestValidationError."""
    serializer = serializer_class(instance=instance, data=data, context=context or {}, partial=partial)
    extra = _extra(serializer, data, [loc]) if loc == "body" else []
    try:
        validated = _validated(serializer_class, serializer, data, loc, context, partial, instance)
    except RequestValidationError as exc:
        raise RequestValidationError(exc.errors + extra) from None
    if extra:
        raise RequestValidationError(extra)
    return validated


def _validated(serializer_class, serializer, data, loc, context, partial, instance) -> dict[str, Any]:
    oversized = _refused_first(serializer, data, [loc])
    if oversized:
        # The other fields are still checked, so all problems are reported together; the fields refused
        # first are left out of that, and so never validated item by item.
        rest = serializer_class(
            instance=instance, data=_without(data, oversized), context=context or {}, partial=partial
        )
        errors = [e for errors in oversized.values() for e in errors]
        if not rest.is_valid():
            errors += [e for e in translate(rest, [loc]) if len(e["loc"]) < 2 or e["loc"][1] not in oversized]
        order = {name: index for index, name in enumerate(serializer.fields)}
        errors.sort(key=lambda e: order.get(e["loc"][1], len(order)) if len(e["loc"]) > 1 else len(order))
        raise RequestValidationError(errors)
    if not serializer.is_valid():
        raise RequestValidationError(translate(serializer, [loc]))
    return serializer.validated_data


# --- Unknown fields -------------------------------------------------------------------------------


def _extra(serializer: serializers.Serializer, data: Any, loc: list) -> list[dict[str, Any]]:
    """`extra_forbidden` for every key of `data` (and of its nested objects) that no writable field reads."""
    if not isinstance(data, Mapping) or hasattr(data, "lists"):
        return []
    fields_ = serializer.fields
    out: list[dict[str, Any]] = []
    for key, value in data.items():
        field = fields_.get(key)
        if field is None or field.read_only:
            out.append(error("extra_forbidden", [*loc, key], "Extra inputs are not permitted", value))
        elif isinstance(field, serializers.ListSerializer | fields.ListField) and isinstance(value, list):
            if not isinstance(field.child, serializers.Serializer):
                continue
            for index, item in enumerate(value):
                out.extend(_extra(field.child, item, [*loc, key, index]))
        elif isinstance(field, serializers.Serializer):
            out.extend(_extra(field, value, [*loc, key]))
    return out


def translate(serializer: serializers.BaseSerializer, loc: list) -> list[dict[str, Any]]:
    return _translate_serializer(serializer, serializer.errors, serializer.initial_data, loc)


def _translate_serializer(serializer, errors, input_, loc) -> list[dict[str, Any]]:
    out: list[dict[str, Any]] = []
    if isinstance(errors, list):  # errors of the object itself
        for detail in errors:
            out.append(_object_error(detail, input_, loc))
        return out
    for name, field_errors in errors.items():
        if name == "non_field_errors":
            for detail in field_errors:
                out.append(_object_error(detail, input_, loc))
            continue
        field = serializer.fields.get(name)
        value = _get(input_, name, field)
        out.extend(_translate_field(field, field_errors, value, [*loc, name], parent_input=input_))
    return out


def _get(container: Any, name: str, field: fields.Field | None) -> Any:
    if not isinstance(container, Mapping):
        return _MISSING
    if field is not None and hasattr(container, "getlist") and isinstance(field, fields.ListField):
        values = container.getlist(name)
        return values if values else _MISSING
    return container.get(name, _MISSING)


def _object_error(detail: ErrorDetail, input_: Any, loc: list) -> dict[str, Any]:
    if detail.code == "invalid" and not isinstance(input_, Mapping):
        return error(
            "model_attributes_type", loc, "Input should be a valid dictionary or object to extract fields from", input_
        )
    message = str(detail)
    return error("value_error", loc, f"Value error, {message}", input_, {"error": message})


def _translate_field(field, field_errors, value, loc, *, parent_input) -> list[dict[str, Any]]:
    out: list[dict[str, Any]] = []
    if isinstance(field, serializers.BaseSerializer) and isinstance(field_errors, Mapping):
        if isinstance(field, serializers.ListSerializer):
            for index, child_errors in field_errors.items():
                if not isinstance(index, int):  # errors of the list itself (length, type)
                    out.extend(_field_error(field, detail, value, loc, parent_input) for detail in child_errors)
                    continue
                child_value = value[index] if isinstance(value, list) and index < len(value) else _MISSING
                out.extend(_translate_field(field.child, child_errors, child_value, [*loc, index], parent_input=value))
            return out
        return _translate_serializer(field, field_errors, value, loc)
    per_item = isinstance(field_errors, list) and field_errors and all(isinstance(e, Mapping) for e in field_errors)
    if isinstance(field, serializers.ListSerializer) and per_item:
        # [{}, {"name": [...]}]: one entry per item.
        for index, child_errors in enumerate(field_errors):
            if child_errors:
                child_value = value[index] if isinstance(value, list) and index < len(value) else _MISSING
                out.extend(_translate_field(field.child, child_errors, child_value, [*loc, index], parent_input=value))
        return out
    if isinstance(field, fields.ListField | fields.DictField) and isinstance(field_errors, Mapping):
        for key, child_errors in field_errors.items():
            if isinstance(value, list) and isinstance(key, int) and key < len(value):
                child_value = value[key]
            elif isinstance(value, Mapping):
                child_value = value.get(key, _MISSING)
            else:
                child_value = _MISSING
            out.extend(_translate_field(field.child, child_errors, child_value, [*loc, key], parent_input=value))
        return out
    if isinstance(field_errors, Mapping):  # nested structure we do not model: flatten
        for key, child_errors in field_errors.items():
            out.extend(_translate_field(None, child_errors, _MISSING, [*loc, key], parent_input=value))
        return out
    for detail in field_errors:
        out.append(_field_error(field, detail, value, loc, parent_input))
    return out


def _plural(n: int) -> str:
    return "" if n == 1 else "s"


def _literal_expected(choices) -> str:
    names = [repr(str(c)) for c in choices]
    if len(names) <= 1:
        return "".join(names)
    return ", ".join(names[:-1]) + " or " + names[-1]


def _limit(field, validator_type, default=None):
    for validator in getattr(field, "validators", []):
        if isinstance(validator, validator_type):
            return validator.limit_value
    return default


def _number(value):
    return int(value) if isinstance(value, float | Decimal) and value == int(value) else value


def _type_error(field, value, loc) -> dict[str, Any]:
    """The Pydantic error for a value of the wrong type (including null) for `field`."""
    if isinstance(field, fields.BooleanField):
        if isinstance(value, str):
            return error("bool_parsing", loc, "Input should be a valid boolean, unable to interpret input", value)
        return error("bool_type", loc, "Input should be a valid boolean", value)
    if isinstance(field, fields.IntegerField):
        if isinstance(value, str):
            return error(
                "int_parsing", loc, "Input should be a valid integer, unable to parse string as an integer", value
            )
        if isinstance(value, float) and not isinstance(value, bool):
            return error(
                "int_from_float", loc, "Input should be a valid integer, got a number with a fractional part", value
            )
        return error("int_type", loc, "Input should be a valid integer", value)
    if isinstance(field, fields.FloatField | fields.DecimalField):
        if isinstance(value, str):
            return error(
                "float_parsing", loc, "Input should be a valid number, unable to parse string as a number", value
            )
        return error("float_type", loc, "Input should be a valid number", value)
    if isinstance(field, fields.UUIDField):
        if isinstance(value, str):
            return uuid_error(value, loc)
        return error("uuid_type", loc, "UUID input should be a string, bytes or UUID object", value)
    if isinstance(field, fields.DateTimeField):
        if isinstance(value, str):
            return error(
                "datetime_from_date_parsing",
                loc,
                "Input should be a valid datetime or date, invalid character in year",
                value,
                {"error": "invalid character in year"},
            )
        return error("datetime_type", loc, "Input should be a valid datetime", value)
    if isinstance(field, fields.ChoiceField):
        expected = _literal_expected(field.choices)
        return error("literal_error", loc, f"Input should be {expected}", value, {"expected": expected})
    if isinstance(field, fields.ListField | serializers.ListSerializer):
        return error("list_type", loc, "Input should be a valid list", value)
    if isinstance(field, fields.DictField | fields.JSONField):
        return error("dict_type", loc, "Input should be a valid dictionary", value)
    if isinstance(field, serializers.Serializer):
        return error(
            "model_attributes_type", loc, "Input should be a valid dictionary or object to extract fields from", value
        )
    return error("string_type", loc, "Input should be a valid string", value)


def uuid_error(value: str, loc: list) -> dict[str, Any]:
    """Pydantic's `uuid_parsing`, with the uuid crate's explanation of what is wrong."""
    reason = _uuid_reason(value)
    return error("uuid_parsing", loc, f"Input should be a valid UUID, {reason}", value, {"error": reason})


def _uuid_reason(value: str) -> str:
    text = value.removeprefix("urn:uuid:")
    for index, char in enumerate(text):
        if char not in "0123456789abcdefABCDEF-":
            return (
                "invalid character: expected an optional prefix of `urn:uuid:` followed by "
                f"[0-9a-fA-F-], found `{char}` at {index + 1}"
            )
    if "-" in text:
        return "invalid group count: expected 5, found " + str(len(text.split("-")))
    return f"invalid length: expected length 32 for simple format, found {len(text)}"


def _field_error(field, detail: ErrorDetail, value, loc, parent_input) -> dict[str, Any]:
    code = getattr(detail, "code", None) or "invalid"
    if code == "required" or (value is _MISSING and code in {"required", "null"}):
        return error("missing", loc, "Field required", parent_input if parent_input is not _MISSING else None)
    if code in {"null", "invalid", "not_a_list", "not_a_dict", "invalid_choice", "date", "datetime", "make_aware"}:
        if isinstance(field, fields.EmailField) and isinstance(value, str):
            reason = "An email address must have an @-sign." if "@" not in value else "The email address is not valid."
            return error("value_error", loc, f"value is not a valid email address: {reason}", value, {"reason": reason})
        if isinstance(field, fields.URLField) and isinstance(value, str):
            return error(
                "url_parsing",
                loc,
                "Input should be a valid URL, relative URL without a base",
                value,
                {"error": "relative URL without a base"},
            )
        return _type_error(field, value, loc)
    if code == "blank":
        return error("string_too_short", loc, "String should have at least 1 character", value, {"min_length": 1})
    if code == "min_length":
        if isinstance(field, fields.ListField | serializers.ListSerializer):
            return _list_length_error("too_short", field.min_length, value, loc)
        n = field.min_length
        return error(
            "string_too_short", loc, f"String should have at least {n} character{_plural(n)}", value, {"min_length": n}
        )
    if code == "max_length":
        if isinstance(field, fields.ListField | serializers.ListSerializer):
            return _list_length_error("too_long", field.max_length, value, loc)
        n = field.max_length
        return error(
            "string_too_long", loc, f"String should have at most {n} character{_plural(n)}", value, {"max_length": n}
        )
    if code == "empty":
        return _list_length_error("too_short", getattr(field, "min_length", None) or 1, value, loc)
    if code == "max_string_length":
        return _type_error(field, value, loc)
    if code == "min_value":
        limit = _number(field.min_value)
        return error(
            "greater_than_equal", loc, f"Input should be greater than or equal to {limit}", value, {"ge": limit}
        )
    if code == "max_value":
        limit = _number(field.max_value)
        return error("less_than_equal", loc, f"Input should be less than or equal to {limit}", value, {"le": limit})
    if code == "greater_than":
        limit = _number(_limit(field, GreaterThan))
        return error("greater_than", loc, f"Input should be greater than {limit}", value, {"gt": limit})
    if code == "less_than":
        limit = _number(_limit(field, LessThan))
        return error("less_than", loc, f"Input should be less than {limit}", value, {"lt": limit})
    if code in {"max_digits", "max_decimal_places", "max_whole_digits"}:
        return error("decimal_max_digits", loc, str(detail), value)
    message = str(detail)
    return error("value_error", loc, f"Value error, {message}", value, {"error": message})


def _list_length_error(type_: str, limit: int, value, loc) -> dict[str, Any]:
    actual = len(value) if isinstance(value, list | tuple) else 0
    if type_ == "too_short":
        msg = f"List should have at least {limit} item{_plural(limit)} after validation, not {actual}"
        ctx = {"field_type": "List", "min_length": limit, "actual_length": actual}
    else:
        msg = f"List should have at most {limit} item{_plural(limit)} after validation, not {actual}"
        ctx = {"field_type": "List", "max_length": limit, "actual_length": actual}
    return error(type_, loc, msg, value, ctx)
