"""Django-level fallbacks so that /api/ never answers with HTML."""

from __future__ import annotations

import sys

from django.http import JsonResponse

from core.middleware import database_unavailable_response


def api_not_found(request, *args, **kwargs):
    return JsonResponse({"detail": "Not found.", "code": "not_found"}, status=404)


def handler404(request, exception=None):
    if request.path.startswith("/api/"):
        return api_not_found(request)
    from django.views.defaults import page_not_found

    return page_not_found(request, exception)


def handler500(request):
    # Django calls this while it handles the exception: a busy or unreachable database is a 503.
    exc = sys.exc_info()[1]
    unavailable = database_unavailable_response(exc) if exc is not None else None
    if unavailable is not None:
        return unavailable
    if request.path.startswith("/api/"):
        return JsonResponse({"detail": "The server failed to process the request.", "code": "server_error"}, status=500)
    from django.views.defaults import server_error

    return server_error(request)
