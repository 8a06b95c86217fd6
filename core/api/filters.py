"""List filters as django-filter FilterSets, answering bad input in the 422 shape of core.api.validation.

A list view parses its query with `ApiView.query(PageQuery, XxxFilter)`: paging stays a serializer, the
filters are a FilterSet (one `filters.py` per app), and the errors of both come back together, in the
order the parts are given. The FilterSet then filters the selector's queryset (`filtered`), or, where the
read is compiled (the task list), only hands over its parsed values. See docs/decisions.md#list-filters.
"""

from __future__ import annotations

import re
from datetime import UTC
from functools import cache
from typing import Any

import django_filters
from django import forms
from django.http import QueryDict
from django_filters.fields import IsoDateTimeField
from rest_framework import fields as drf_fields
from rest_framework import serializers

from core.api.validation import RequestValidationError, error, uuid_error


class StrictBooleanField(forms.Field):
    """DRF's boolean words (`true`, `1`, `yes`, `on`...); anything else is an error, not "no filter" as
    django-filter's NullBooleanField would have it."""

    def to_python(self, value):
        if value in (None, ""):
            return None
        if value in drf_fields.BooleanField.TRUE_VALUES:
            return True
        if value in drf_fields.BooleanField.FALSE_VALUES:
            return False
        raise forms.ValidationError("Input should be a valid boolean", code="invalid")


class BooleanFilter(django_filters.BooleanFilter):
    field_class = StrictBooleanField


class StrictUUIDField(forms.UUIDField):
    """As DRF's UUIDField: surrounding spaces are an error, not stripped."""

    def __init__(self, **kwargs):
        super().__init__(strip=False, **kwargs)


class UUIDFilter(django_filters.UUIDFilter):
    field_class = StrictUUIDField


class StrictDecimalField(forms.DecimalField):
    """A non-negative amount written as the schema says (digits, at most `decimal_places` after a point):
    no sign, exponent, `NaN` or spaces, which Python's Decimal would take."""

    def to_python(self, value):
        if value in self.empty_values:
            return None
        pattern = rf"[0-9]{{1,{self.max_digits - self.decimal_places}}}(\.[0-9]{{1,{self.decimal_places}}})?"
        if not isinstance(value, str) or not re.fullmatch(pattern, value):
            raise forms.ValidationError(
                f"Input should be a decimal number with at most {self.decimal_places} decimal places", code="invalid"
            )
        return super().to_python(value)

    def pattern(self) -> str:
        return rf"^[0-9]{{1,{self.max_digits - self.decimal_places}}}(\.[0-9]{{1,{self.decimal_places}}})?$"


class AmountFilter(django_filters.NumberFilter):
    """A non-negative decimal bound (`max_digits`, `decimal_places`), strict as StrictDecimalField."""

    field_class = StrictDecimalField


class UTCDateTimeField(IsoDateTimeField):
    """An ISO 8601 date-time (no offset: UTC) as a UTC datetime. The database takes offsets up to 15:59 only,
    and a moment near year 1 or 9999 may have no UTC equivalent Python can hold: both are an error here."""

    def to_python(self, value):
        moment = super().to_python(value)
        if moment is None:
            return None
        try:
            return moment.astimezone(UTC)
        except OverflowError as exc:
            raise forms.ValidationError("Enter a date/time between years 1 and 9999 in UTC.", code="invalid") from exc


class DateTimeFilter(django_filters.IsoDateTimeFilter):
    field_class = UTCDateTimeField


class FilterSet(django_filters.FilterSet):
    """A filter with `initial=` takes that value when the query leaves it out or empty, as a serializer
    field's `default` does. Declare only filters whose parsing is a pure function of the query string
    (choices, and this module's UUIDs and booleans: no ModelChoiceFilter): their parsing is cached per
    query string."""

    def __init__(self, data=None, *args, **kwargs):
        super().__init__(None if data is None else with_defaults(type(self), data), *args, **kwargs)

    def get_form_class(self):
        return form_class(type(self))


@cache
def form_class(filterset_class: type[FilterSet]) -> type[forms.Form]:
    """The FilterSet's form, built once per class rather than per request (the form copies its fields
    when it is instantiated, so sharing the class-level ones is safe)."""
    fields = {name: filter_.field for name, filter_ in filterset_class.base_filters.items()}
    return type(f"{filterset_class.__name__}Form", (filterset_class._meta.form,), fields)


def with_defaults(filterset_class: type[FilterSet], data: QueryDict) -> QueryDict:
    data = data.copy()
    for name, filter_ in filterset_class.base_filters.items():
        initial = filter_.extra.get("initial")
        if initial is not None and not data.get(name):
            data[name] = initial
    return data


def parse(filterset_class: type[FilterSet], data: QueryDict) -> dict[str, Any]:
    """The FilterSet's values for `data`, without the filters left empty; or RequestValidationError."""
    form = form_class(filterset_class)(with_defaults(filterset_class, data))
    if not form.is_valid():
        raise RequestValidationError(
            [
                _error(form.fields[name], detail, _bad_value(detail, data, name), ["query", name])
                for name, details in form.errors.as_data().items()
                for detail in details
            ]
        )
    return {name: value for name, value in form.cleaned_data.items() if value not in (None, "")}


def _bad_value(detail: forms.ValidationError, data: QueryDict, name: str) -> Any:
    """The value an error is about: the one named by the error (one of a repeated parameter's), else the query's."""
    named = (detail.params or {}).get("value")
    return named if named is not None and detail.code == "invalid_choice" else data.get(name)


def filtered(filterset_class: type[FilterSet], queryset, params: dict[str, Any]):
    """`queryset` narrowed by the FilterSet's filters, with values from `parse` (so parsing can be cached
    apart from the queryset)."""
    for name, filter_ in filterset_class.base_filters.items():
        if name in params:
            queryset = filter_.filter(queryset, params[name])
    return queryset


def _error(field: forms.Field, detail: forms.ValidationError, value: Any, loc: list) -> dict[str, Any]:
    # The messages a DRF serializer field of the same kind gives (core.api.validation._type_error).
    if isinstance(field, forms.ChoiceField):
        names = [repr(str(key)) for key, _ in field.choices if key != ""]
        expected = names[0] if len(names) == 1 else ", ".join(names[:-1]) + " or " + names[-1]
        return error("literal_error", loc, f"Input should be {expected}", value, {"expected": expected})
    if isinstance(field, forms.UUIDField):
        return uuid_error(value, loc)
    if isinstance(field, StrictBooleanField):
        return error("bool_parsing", loc, "Input should be a valid boolean, unable to interpret input", value)
    message = " ".join(detail.messages)
    return error("value_error", loc, f"Value error, {message}", value, {"error": message})


# --- Schema ----------------------------------------------------------------------------------------


@cache
def parameters(filterset_class: type[FilterSet]) -> type[serializers.Serializer]:
    """For `extend_schema(parameters=[...])`: the FilterSet's query parameters as the serializer that
    described them before, so the schema shows the same names, enums, types and defaults."""
    attrs: dict[str, Any] = {"__module__": filterset_class.__module__}
    for name, filter_ in filterset_class.base_filters.items():
        kwargs: dict[str, Any] = {"help_text": filter_.extra.get("help_text")}
        initial = filter_.extra.get("initial")
        if initial is None:
            kwargs["required"] = False
        else:
            kwargs["default"] = initial
        if isinstance(filter_, django_filters.MultipleChoiceFilter):
            attrs[name] = serializers.ListField(
                child=serializers.ChoiceField(choices=filter_.extra["choices"]), **kwargs
            )
        elif isinstance(filter_, django_filters.ChoiceFilter):
            attrs[name] = serializers.ChoiceField(choices=filter_.extra["choices"], **kwargs)
        elif isinstance(filter_, django_filters.IsoDateTimeFilter):
            attrs[name] = serializers.DateTimeField(**kwargs)
        elif isinstance(filter_, AmountFilter):
            attrs[name] = serializers.RegexField(filter_.field.pattern(), **kwargs)
        elif isinstance(filter_, django_filters.CharFilter):
            attrs[name] = serializers.CharField(max_length=filter_.extra.get("max_length"), **kwargs)
        elif isinstance(filter_, UUIDFilter):
            attrs[name] = serializers.UUIDField(**kwargs)
        elif isinstance(filter_, BooleanFilter):
            attrs[name] = serializers.BooleanField(**kwargs)
        else:
            raise TypeError(f"{filterset_class.__name__}.{name}: no schema for {type(filter_).__name__}")
    name = filterset_class.__name__.removesuffix("Filter") + "FilterQuery"
    return type(name, (serializers.Serializer,), attrs)


def query_names(part: type[serializers.Serializer] | type[FilterSet]) -> frozenset[str]:
    """The query parameters a part reads (the others are ignored, and kept out of the parse cache's key)."""
    if issubclass(part, FilterSet):
        return frozenset(part.base_filters)
    return frozenset(part._declared_fields)
