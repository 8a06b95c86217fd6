from __future__ import annotations

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
