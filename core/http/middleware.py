"""Cross-cutting request handling that must happen before any view runs."""

from __future__ import annotations

import logging
import re
import uuid

from django.http import JsonResponse
from django.utils.cache import patch_vary_headers

from core.db import dberrors
from core.http import ratelimit
from core.http.clientaddr import client_ip, is_trusted
from core.ops.logging import request_id_var

logger = logging.getLogger(__name__)

_REQUEST_ID = re.compile(r"^[A-Za-z0-9._-]{1,128}$")


class RequestIdMiddleware:
    """Give every request an id: log lines carry it, and so does the `X-Request-ID` response header.

    An id sent by a trusted proxy is kept, so one id follows the request through the whole stack.
    """

    def __init__(self, get_response):
        self.get_response = get_response

    def __call__(self, request):
        incoming = request.META.get("HTTP_X_REQUEST_ID", "")
        trusted = incoming and _REQUEST_ID.match(incoming) and is_trusted(request.META.get("REMOTE_ADDR", ""))
        request.request_id = incoming if trusted else uuid.uuid4().hex
        token = request_id_var.set(request.request_id)
        try:
            response = self.get_response(request)
        finally:
            request_id_var.reset(token)
        response["X-Request-ID"] = request.request_id
        return response


class PrivateApiResponseMiddleware:
    """Every `/api/` answer is for one caller: `Cache-Control: no-store` (tokens, keys, per-user bodies and
    the errors about them never sit in a shared or browser cache) and `Vary: Authorization`, unless a view
    chose its own caching. Outermost but for the request id, so 429s and 503s carry it too
    (docs/decisions.md#caching-of-api-responses)."""

    def __init__(self, get_response):
        self.get_response = get_response

    def __call__(self, request):
        response = self.get_response(request)
        if request.path_info.startswith("/api/"):
            if not response.has_header("Cache-Control"):
                response["Cache-Control"] = "no-store"
            patch_vary_headers(response, ("Authorization",))
        return response


def database_unavailable_response(exc: BaseException) -> JsonResponse | None:
    """503 with Retry-After for a database that is busy or out of reach (core.db.dberrors), else None."""
    unavailable = dberrors.classify(exc)
    if unavailable is None:
        return None
    logger.warning("database %s: %s", unavailable.code, exc)
    return JsonResponse(unavailable.body(), status=unavailable.status_code, headers=unavailable.headers())


class DatabaseUnavailableMiddleware:
    """Views outside DRF (the admin, media): a busy or unreachable database is a 503, not a 500.

    API views answer the same through core.api.exceptions; an error raised by a middleware reaches
    core.http.views.handler500, which does the same.
    """

    def __init__(self, get_response):
        self.get_response = get_response

    def __call__(self, request):
        return self.get_response(request)

    def process_exception(self, request, exception):
        return database_unavailable_response(exception)


class ClientAddressMiddleware:
    """Settle the client's IP and scheme, believing forwarded headers only from TRUSTED_PROXIES."""

    def __init__(self, get_response):
        self.get_response = get_response

    def __call__(self, request):
        peer = request.META.get("REMOTE_ADDR", "")
        request.client_ip = client_ip(peer, request.META.get("HTTP_X_FORWARDED_FOR"))
        forwarded_proto = request.META.get("HTTP_X_FORWARDED_PROTO")
        if forwarded_proto and is_trusted(peer):
            request.META["wsgi.url_scheme"] = "https" if forwarded_proto.split(",")[-1].strip() == "https" else "http"
        return self.get_response(request)


class HttpsRequiredMiddleware:
    """Refuse anything that did not arrive over TLS; nothing is redirected (docs/decisions.md#https)."""

    def __init__(self, get_response):
        self.get_response = get_response

    def __call__(self, request):
        if not request.is_secure():
            return JsonResponse({"detail": "HTTPS is required.", "code": "https_required"}, status=403)
        return self.get_response(request)


class RateLimitMiddleware:
    def __init__(self, get_response):
        self.get_response = get_response

    def __call__(self, request):
        classified = ratelimit.classify(request.method, request.path_info)
        if classified is None:
            return self.get_response(request)
        bucket, rule = classified
        usage = ratelimit.hit(request, bucket, rule, request.client_ip)
        if usage is None:
            return self.get_response(request)
        if usage.limited:
            response = JsonResponse(
                {"detail": "Rate limit exceeded. Try again later.", "code": "rate_limited"}, status=429
            )
            response["Retry-After"] = str(usage.retry_after)
        else:
            response = self.get_response(request)
        for name, value in usage.headers().items():
            response[name] = value
        return response
