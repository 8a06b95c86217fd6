"""The base every API view stands on: access policy, input parsing, path checks, paging."""

from __future__ import annotations

from functools import cache, lru_cache
from typing import Any

from django.core.exceptions import ImproperlyConfigured
from django.http import QueryDict
from django.urls import reverse
from django.utils.cache import patch_vary_headers
from rest_framework import permissions, serializers, status
from rest_framework.request import Request
from rest_framework.response import Response
from rest_framework.views import APIView

from core.api import filters
from core.api.converters import InvalidUUID
from core.api.permissions import HasRequiredPermission, IsStaff, RejectApiKeys, required_permission
from core.api.renderers import CSVRenderer, JSONRenderer
from core.api.validation import RequestValidationError, uuid_error, validate
from core.http.access import Access

_PERMISSIONS = {
    Access.PUBLIC: (permissions.AllowAny,),
    Access.USER: (permissions.IsAuthenticated, RejectApiKeys),
    Access.USER_OR_KEY: (permissions.IsAuthenticated,),
    # Staff, and the Django permission the view names (docs/decisions.md#staff-permissions).
    Access.STAFF: (permissions.IsAuthenticated, RejectApiKeys, IsStaff, HasRequiredPermission),
}
_HANDLED_METHODS = ("get", "post", "put", "patch", "delete")


class ApiView(APIView):
    # Subclasses set `access`; there is deliberately no default. A STAFF view also names the Django
    # permission each of its methods needs in `required_permission` (core.api.permissions.HasRequiredPermission).
    access: Access

    def __init_subclass__(cls, **kwargs):
        super().__init_subclass__(**kwargs)
        access = getattr(cls, "access", None)
        if access is not None:
            cls.permission_classes = _PERMISSIONS[access]
            if access is Access.PUBLIC:
                cls.authentication_classes = ()
            if access is Access.STAFF:
                missing = [m for m in _HANDLED_METHODS if hasattr(cls, m) and not required_permission(cls, m.upper())]
                if missing:
                    raise ImproperlyConfigured(f"{cls.__name__}: no required_permission for {', '.join(missing)}")

    def get_authenticate_header(self, request: Request) -> str:
        # Public views run no authenticators, and DRF would then turn a 401 into a 403.
        return "Bearer"

    def initial(self, request: Request, *args, **kwargs) -> None:
        super().initial(request, *args, **kwargs)
        bad = [uuid_error(str(v), ["path", k]) for k, v in kwargs.items() if isinstance(v, InvalidUUID)]
        if bad:
            raise RequestValidationError(bad)

    # Input ---------------------------------------------------------------------------------------

    def body(self, serializer_class: type[serializers.Serializer], **kwargs) -> dict[str, Any]:
        return validate(
            serializer_class, self.request.data, loc="body", context=self.get_serializer_context(), **kwargs
        )

    def query(self, *parts: type[serializers.Serializer] | type[filters.FilterSet]) -> dict[str, Any]:
        """The query parsed by each part (a serializer, or a FilterSet of core.api.filters), merged; the
        errors of all parts together, in the order of the parts."""
        if all(_context_free(part) for part in parts):
            items = tuple((name, tuple(values)) for name, values in self.request.query_params.lists())
            return dict(_parsed_query(parts, items))
        return _parse_query(parts, self.request.query_params, self.get_serializer_context())

    def get_serializer_context(self) -> dict[str, Any]:
        return {"request": self.request, "view": self}

    # Output --------------------------------------------------------------------------------------

    def _csv_filename(self) -> str | None:
        """The download's name when this request's method is marked with `csv_export`, else None."""
        method = getattr(self, (getattr(self.request, "method", None) or "").lower(), None)
        return getattr(method, "csv_filename", None)

    def get_renderers(self):
        renderers = super().get_renderers()
        return [*renderers, CSVRenderer()] if self._csv_filename() else renderers

    def csv_table(self, data: Any) -> tuple[list[str], list[dict[str, Any]]]:
        """The columns and rows of a CSV export: by default `data` is a list of objects, each a row."""
        rows = list(data)
        return list(dict.fromkeys(key for row in rows for key in row)), rows

    def wants_csv(self, request: Request) -> bool:
        return isinstance(getattr(request, "accepted_renderer", None), CSVRenderer)

    def finalize_response(self, request, response, *args, **kwargs):
        response = super().finalize_response(request, response, *args, **kwargs)
        filename = self._csv_filename()
        if filename:
            patch_vary_headers(response, ("Accept",))
        if isinstance(getattr(response, "accepted_renderer", None), CSVRenderer):
            if response.status_code >= 400:  # errors keep the contract's JSON shape whatever was accepted
                response.accepted_renderer, response.accepted_media_type = JSONRenderer(), JSONRenderer.media_type
            else:
                response["Content-Disposition"] = f'attachment; filename="{filename}.csv"'
        return response

    def created(self, data: Any, url_name: str, **url_kwargs: Any) -> Response:
        """A 201 whose `Location` is the new resource's URL (route `url_name`), see docs/decisions.md#creates."""
        location = self.request.build_absolute_uri(reverse(url_name, kwargs=url_kwargs))
        return Response(data, status=status.HTTP_201_CREATED, headers={"Location": location})


def csv_export(filename: str):
    """Marks a view method as also answering `Accept: text/csv`, saved as `<filename>.csv`
    (docs/decisions.md#csv-exports); the view's `csv_table(data)` gives the columns and rows."""

    def mark(method):
        method.csv_filename = filename
        return method

    return mark


def _context_free(part) -> bool:
    """FilterSets always are (core.api.filters.FilterSet); a serializer when it declares
    `context_free = True` in its own body."""
    return issubclass(part, filters.FilterSet) or bool(part.__dict__.get("context_free"))


@cache
def _query_names(parts: tuple) -> frozenset[str]:
    return frozenset().union(*(filters.query_names(part) for part in parts))


def _parse_query(parts: tuple, data: QueryDict, context: dict | None) -> dict[str, Any]:
    result: dict[str, Any] = {}
    errors: list[dict[str, Any]] = []
    for part in parts:
        try:
            if issubclass(part, filters.FilterSet):
                result.update(filters.parse(part, data))
            else:
                result.update(validate(part, data, loc="query", context=context))
        except RequestValidationError as exc:
            errors.extend(exc.errors)
    if errors:
        raise RequestValidationError(errors)
    return result


@lru_cache(maxsize=1024)
def _parsed_query(parts: tuple, items: tuple) -> dict[str, Any]:
    """The parsed query when every part is a pure function of the parameters it reads (no context, no
    database): per process, so the hottest list does not run the field machinery for the same few
    query strings again and again. Errors are not kept. Keyed first by the whole query (the cheapest
    key to build), then by the parameters the parts read, so unknown ones cannot defeat the cache."""
    names = _query_names(parts)
    return _parsed_known(parts, tuple(item for item in items if item[0] in names))


@lru_cache(maxsize=1024)
def _parsed_known(parts: tuple, items: tuple) -> dict[str, Any]:
    data = QueryDict(mutable=True)
    for name, values in items:
        data.setlist(name, list(values))
    return _parse_query(parts, data, None)
