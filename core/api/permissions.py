from __future__ import annotations

from collections.abc import Mapping

from django.apps import apps
from django.conf import settings
from rest_framework import permissions
from rest_framework.exceptions import PermissionDenied


class ApiKeyNotAllowed(PermissionDenied):
    default_detail = "API keys cannot be used on this endpoint; use a user access token."
    default_code = "api_key_not_allowed"


class StaffOnly(PermissionDenied):
    default_detail = "This endpoint is for staff only."
    default_code = "permission_denied"


class MissingPermission(PermissionDenied):
    default_detail = "You do not have permission to perform this action."
    default_code = "permission_denied"

    def __init__(self, permission: str | None = None):
        detail = f"This action needs the {permission} permission." if permission else self.default_detail
        super().__init__(detail, self.default_code)


class RejectApiKeys(permissions.BasePermission):
    def has_permission(self, request, view) -> bool:
        # By the setting, like AUTH_USER_MODEL: core imports no app of its own (docs/architecture.md#apps).
        if isinstance(request.auth, apps.get_model(settings.API_KEY_MODEL)):
            raise ApiKeyNotAllowed()
        return True


class IsStaff(permissions.BasePermission):
    def has_permission(self, request, view) -> bool:
        if not (request.user and request.user.is_staff):
            raise StaffOnly()
        return True


class HasRequiredPermission(permissions.BasePermission):
    """The Django permission the view names for the request's method (docs/decisions.md#staff-permissions):
    `required_permission` is one "app_label.codename" for every method, or a mapping of HTTP method to one
    (HEAD and OPTIONS follow GET). Checked with `user.has_perm`, so groups count and a superuser has them
    all. A method the view does not handle passes, for the 405 that follows; one it handles without a
    permission named is refused (ApiView refuses such a view at import already)."""

    def has_permission(self, request, view) -> bool:
        permission = required_permission(view, request.method)
        if permission is None:
            if request.method != "OPTIONS" and hasattr(view, request.method.lower()):
                raise MissingPermission()
            return True
        if not request.user.has_perm(permission):
            raise MissingPermission(permission)
        return True


def required_permission(view, method: str) -> str | None:
    declared = getattr(view, "required_permission", None)
    if declared is None or isinstance(declared, str):
        return declared
    if not isinstance(declared, Mapping):
        raise TypeError(f"{type(view).__name__}.required_permission: a permission name or a mapping by method")
    return declared.get("GET" if method in ("HEAD", "OPTIONS") else method)
