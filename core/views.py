"""Django-level fallbacks so that /api/ never answers with HTML."""

from __future__ import annotations

from django.http import JsonResponse


def api_not_found(request, *args, **kwargs):
    return JsonResponse({"detail": "Not found.", "code": "not_found"}, status=404)


def handler404(request, exception=None):
    if request.path.startswith("/api/"):
        return api_not_found(request)
    from django.views.defaults import page_not_found

    return page_not_found(request, exception)


def handler500(request):
    from core.api.unavailable import current_exception, database_unavailable_json, is_database_unavailable

    if is_database_unavailable(current_exception()):
        return database_unavailable_json()
    if request.path.startswith("/api/"):
        return JsonResponse({"detail": "The server failed to process the request.", "code": "server_error"}, status=500)
    from django.views.defaults import server_error

    return server_error(request)
