from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager

from rest_framework.request import Request

from core.api.schema import error_response
from core.api.validation import RequestValidationError, error
from tasks_market.services.errors import InvalidField

PROVIDER_ERRORS = {
    502: error_response("The payment provider refused the call; nothing was changed."),
    503: error_response("The payment provider is unavailable; nothing was changed."),
}


@contextmanager
def body_rules(request: Request) -> Iterator[None]:
    """Report a service's InvalidField as the 422 of that body field."""
    try:
        yield
    except InvalidField as exc:
        data = request.data if isinstance(request.data, dict) else {}
        raise RequestValidationError(
            [
                error(
                    "value_error",
                    ["body", exc.field],
                    f"Value error, {exc.message}",
                    data.get(exc.field),
                    {"error": exc.message},
                )
            ]
        ) from exc
