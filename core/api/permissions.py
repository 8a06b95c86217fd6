from __future__ import annotations

from rest_framework import permissions
from rest_framework.exceptions import PermissionDenied


class ApiKeyNotAllowed(PermissionDenied):
    default_detail = "API keys cannot be used on this endpoint; use a user access token."
    default_code = "api_key_not_allowed"


class StaffOnly(PermissionDenied):
    default_detail = "This endpoint is for staff only."
    default_code = "permission_denied"


class RejectApiKeys(permissions.BasePermission):
    def has_permission(self, request, view) -> bool:
        from accounts.models import ApiKey

        if isinstance(request.auth, ApiKey):
            raise ApiKeyNotAllowed()
        return True


class IsStaff(permissions.BasePermission):
    def has_permission(self, request, view) -> bool:
        if not (request.user and request.user.is_staff):
            raise StaffOnly()
        return True
