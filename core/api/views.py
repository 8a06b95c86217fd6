"""The base every API view stands on: access policy, input parsing, path checks, paging."""

from __future__ import annotations

from functools import lru_cache
from typing import Any

from django.http import QueryDict
from rest_framework import permissions, serializers
from rest_framework.request import Request
from rest_framework.views import APIView

from core.access import Access
from core.api.converters import InvalidUUID
from core.api.permissions import IsStaff, RejectApiKeys
from core.api.validation import RequestValidationError, uuid_error, validate

_PERMISSIONS = {
    Access.PUBLIC: (permissions.AllowAny,),
    Access.USER: (permissions.IsAuthenticated, RejectApiKeys),
    Access.USER_OR_KEY: (permissions.IsAuthenticated,),
    Access.STAFF: (permissions.IsAuthenticated, RejectApiKeys, IsStaff),
}


class ApiView(APIView):
    """Subclasses set `access`; there is deliberately no default."""

    access: Access

    def __init_subclass__(cls, **kwargs):
        super().__init_subclass__(**kwargs)
        access = getattr(cls, "access", None)
        if access is not None:
            cls.permission_classes = _PERMISSIONS[access]
            if access is Access.PUBLIC:
                cls.authentication_classes = ()

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

    def query(self, serializer_class: type[serializers.Serializer]) -> dict[str, Any]:
        if serializer_class.__dict__.get("context_free"):
            items = tuple((name, tuple(values)) for name, values in self.request.query_params.lists())
            return dict(_validated_query(serializer_class, items))
        return validate(serializer_class, self.request.query_params, loc="query", context=self.get_serializer_context())

    def get_serializer_context(self) -> dict[str, Any]:
        return {"request": self.request, "view": self}


@lru_cache(maxsize=1024)
def _validated_query(serializer_class: type[serializers.Serializer], items: tuple) -> dict[str, Any]:
    """The validated query of a serializer that declares `context_free = True` in its own body (a pure
    function of the query string: no context, no database): per process, so the hottest list does not
    run DRF's field machinery for the same few query strings again and again. Errors are not kept."""
    data = QueryDict(mutable=True)
    for name, values in items:
        data.setlist(name, list(values))
    return validate(serializer_class, data, loc="query")
