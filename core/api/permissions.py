from __future__ import annotations

from rest_framework import permissions
from rest_framework.exceptions import PermissionDenied
from rest_framework_simplejwt.tokens import Token


class ApiKeyNotAllowed(PermissionDenied):
    default_detail = "API keys cannot be used on this endpoint; use a user access token."
    default_code = "api_key_not_allowed"


class StaffOnly(PermissionDenied):
    default_detail = "This endpoint is for staff only."
    default_code = "permission_denied"


class RejectApiKeys(permissions.BasePermission):
    """Only a user's access token (a JWT) may pass: the other Bearer credential is an API key."""

    def has_permission(self, request, view) -> bool:
        if request.auth is not None and not isinstance(request.auth, Token):
            raise ApiKeyNotAllowed()
        return True


class IsStaff(permissions.BasePermission):
    def has_permission(self, request, view) -> bool:
        if not (request.user and request.user.is_staff):
            raise StaffOnly()
        return True
