"""The production rate-limit middleware, except for the benchmark's bare routes."""

from __future__ import annotations

from core.http.middleware import RateLimitMiddleware

BARE_PREFIX = "/bench/bare/"


class RateLimitExceptBare(RateLimitMiddleware):
    def __call__(self, request):
        if request.path_info.startswith(BARE_PREFIX):
            return self.get_response(request)
        return super().__call__(request)
