"""The database cannot be reached (restarting, failing over, out of connections): 503, never 500.

A request that fails because PostgreSQL is away answers `503 database_unavailable` with `Retry-After`
(CONTRACT §4 shape); its transaction was rolled back, so it changed nothing. Used by the API's exception
handler (core.api.exceptions) and by handler500 (core.views) for failures outside a view, e.g. in a
middleware. Django drops the broken connection at the end of the request, and CONN_HEALTH_CHECKS
makes the next request connect afresh, so the service recovers by itself once the database is back.
"""

from __future__ import annotations

import sys

from django.db import InterfaceError, OperationalError
from django.http import JsonResponse

RETRY_AFTER_SECONDS = 5
DETAIL = "The database is unavailable; try again shortly."
CODE = "database_unavailable"


def is_database_unavailable(exc: BaseException | None) -> bool:
    return isinstance(exc, OperationalError | InterfaceError)


def current_exception() -> BaseException | None:
    return sys.exc_info()[1]


def database_unavailable_json() -> JsonResponse:
    response = JsonResponse({"detail": DETAIL, "code": CODE}, status=503)
    response["Retry-After"] = str(RETRY_AFTER_SECONDS)
    return response
