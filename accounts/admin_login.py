"""The admin's login page behind the same guessing throttle as `POST /api/v1/auth/token`."""

from __future__ import annotations

from django.contrib import admin
from django.http import JsonResponse

from accounts.throttle import LoginThrottled, login_attempt_begin, login_attempt_forget


def admin_login(request, extra_context=None):
    """`admin.site.login`, with every POST counted per account and per client (accounts.throttle)."""
    if request.method != "POST":
        return admin.site.login(request, extra_context)
    client_ip = getattr(request, "client_ip", None) or request.META.get("REMOTE_ADDR", "")
    try:
        attempt = login_attempt_begin(email=request.POST.get("username", ""), client_ip=client_ip)
    except LoginThrottled as exc:
        response = JsonResponse({"detail": str(exc.detail), "code": "rate_limited"}, status=429)
        response["Retry-After"] = str(exc.wait)
        return response
    response = admin.site.login(request, extra_context)
    if response.status_code == 302 and request.user.is_authenticated:
        login_attempt_forget(attempt)
    return response
