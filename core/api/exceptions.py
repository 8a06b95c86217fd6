"""The one exception handler: every error leaves the API in the shape of docs/decisions.md#errors, never as HTML."""

from __future__ import annotations

import logging

from django.conf import settings
from django.core.exceptions import (
    PermissionDenied,
    RequestDataTooBig,
    SuspiciousOperation,
    TooManyFieldsSent,
    TooManyFilesSent,
)
from django.http import Http404, UnreadablePostError
from rest_framework import exceptions, status
from rest_framework.response import Response

from core.api.validation import RequestValidationError, error
from core.db import dberrors
from core.http.errors import DomainError, InputRejected

logger = logging.getLogger(__name__)


def error_response(status_code: int, detail: str, code: str, headers: dict | None = None) -> Response:
    return Response({"detail": detail, "code": code}, status=status_code, headers=headers)


def validation_response(errors: list[dict]) -> Response:
    return Response({"detail": errors}, status=status.HTTP_422_UNPROCESSABLE_ENTITY)


def exception_handler(exc: Exception, context: dict) -> Response:
    if isinstance(exc, RequestValidationError):
        return validation_response(exc.errors)
    if isinstance(exc, InputRejected):
        return validation_response(
            [error("value_error", exc.loc, f"Value error, {exc.message}", ctx={"error": exc.message})]
        )
    if isinstance(exc, DomainError):
        return error_response(exc.status_code, exc.message, exc.code)
    if isinstance(exc, Http404):
        return error_response(404, "Not found.", "not_found")
    if isinstance(exc, PermissionDenied):
        return error_response(403, "You do not have permission to perform this action.", "permission_denied")
    if isinstance(exc, RequestDataTooBig):
        return error_response(413, "The request body is too large.", "payload_too_large")
    if isinstance(exc, SuspiciousOperation):
        return suspicious_response(exc)
    if isinstance(exc, UnreadablePostError):  # the body stopped arriving (a server read deadline) or broke off
        return error_response(400, "The request body could not be read.", "bad_request")
    if isinstance(exc, exceptions.ValidationError):
        # A serializer validated outside `validate()`: no field metadata, so report what DRF knows.
        return validation_response(_flatten_drf_errors(exc.detail, ["body"]))
    if isinstance(exc, exceptions.APIException):
        headers = {}
        if getattr(exc, "auth_header", None):
            headers["WWW-Authenticate"] = exc.auth_header
        if getattr(exc, "wait", None):
            headers["Retry-After"] = str(int(exc.wait))
        code = _code_for(exc)
        detail = exc.detail if isinstance(exc.detail, str) else str(exc.default_detail)
        return error_response(exc.status_code, str(detail), code, headers)
    view = context.get("view")
    unavailable = dberrors.classify(exc)
    if unavailable is not None:
        logger.warning("database %s in %s: %s", unavailable.code, type(view).__name__ if view else "API view", exc)
        return error_response(unavailable.status_code, unavailable.detail, unavailable.code, unavailable.headers())
    logger.exception("Unhandled error in %s", type(view).__name__ if view else "API view", exc_info=exc)
    return error_response(500, "The server failed to process the request.", "server_error")


def suspicious_error(exc: BaseException | None) -> tuple[str, str]:
    """(detail, code) of the 400 for a request Django refuses to parse (too many query parameters or
    files, a disallowed Host, ...): the client's fault, never a 500 (see docs/decisions.md#errors)."""
    if isinstance(exc, TooManyFieldsSent):
        return f"The request has more than {settings.DATA_UPLOAD_MAX_NUMBER_FIELDS} fields.", "too_many_fields"
    if isinstance(exc, TooManyFilesSent):
        return f"The request has more than {settings.DATA_UPLOAD_MAX_NUMBER_FILES} files.", "too_many_files"
    return "The request could not be understood.", "bad_request"


def suspicious_response(exc: SuspiciousOperation) -> Response:
    detail, code = suspicious_error(exc)
    return error_response(400, detail, code)


def _code_for(exc: exceptions.APIException) -> str:
    # DRF's default codes are already the contract's (not_authenticated, permission_denied, ...).
    return getattr(exc.detail, "code", None) or exc.default_code


def _flatten_drf_errors(detail, loc) -> list[dict]:
    out: list[dict] = []
    if isinstance(detail, dict):
        for key, value in detail.items():
            out.extend(_flatten_drf_errors(value, loc if key == "non_field_errors" else [*loc, key]))
    elif isinstance(detail, list):
        for item in detail:
            out.extend(_flatten_drf_errors(item, loc))
    else:
        message = str(detail)
        if getattr(detail, "code", None) == "required":
            out.append(error("missing", loc, "Field required"))
        else:
            out.append(error("value_error", loc, f"Value error, {message}", ctx={"error": message}))
    return out
