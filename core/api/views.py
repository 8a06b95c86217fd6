"""The base every API view stands on: access policy, input parsing, path checks, paging."""

from __future__ import annotations

from typing import Any

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
        return validate(serializer_class, self.request.query_params, loc="query", context=self.get_serializer_context())

    def get_serializer_context(self) -> dict[str, Any]:
        return {"request": self.request, "view": self}
