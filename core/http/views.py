"""Django-level fallbacks so that /api/ never answers with HTML (see docs/decisions.md#errors).

Django answers some requests before or around any DRF view: an unknown path, a CSRF failure, a
request it refuses to parse, an error raised by a middleware. Under /api/ each is JSON in the error
shape; elsewhere (the admin, the guide, the checkout page) Django's own pages stay.
"""

from __future__ import annotations

import sys

from django.http import JsonResponse
from django.views import defaults
from django.views.csrf import csrf_failure as django_csrf_failure
from django.views.decorators.csrf import csrf_exempt

from core.api.exceptions import suspicious_error
from core.http.middleware import database_unavailable_response


def _is_api(request) -> bool:
    return request.path.startswith("/api/")


def _error(status: int, detail: str, code: str) -> JsonResponse:
    return JsonResponse({"detail": detail, "code": code}, status=status)


# No CSRF check: the API authenticates with bearer tokens only, and a POST to a path that does not
# exist must be the same 404 as a GET, not Django's HTML CSRF page.
@csrf_exempt
def api_not_found(request, *args, **kwargs):
    return _error(404, "Not found.", "not_found")


def csrf_failure(request, reason: str = ""):
    """CSRF_FAILURE_VIEW. The API never relies on cookies, so no /api/ view should get here; if one
    does, the answer is JSON without Django's reason (which names headers and cookies)."""
    if _is_api(request):
        return _error(403, "CSRF verification failed.", "csrf_failed")
    return django_csrf_failure(request, reason=reason)


def handler400(request, exception=None):
    if _is_api(request):
        detail, code = suspicious_error(exception)
        return _error(400, detail, code)
    return defaults.bad_request(request, exception)


def handler403(request, exception=None):
    if _is_api(request):
        return _error(403, "You do not have permission to perform this action.", "permission_denied")
    return defaults.permission_denied(request, exception)


def handler404(request, exception=None):
    if _is_api(request):
        return api_not_found(request)
    return defaults.page_not_found(request, exception)


def handler500(request):
    # Django calls this while it handles the exception: a busy or unreachable database is a 503.
    exc = sys.exc_info()[1]
    unavailable = database_unavailable_response(exc) if exc is not None else None
    if unavailable is not None:
        return unavailable
    if _is_api(request):
        return _error(500, "The server failed to process the request.", "server_error")
    return defaults.server_error(request)
