"""The project's own error types. Services raise these; one exception handler maps them to HTTP."""

from __future__ import annotations


class DomainError(Exception):
    """A request that cannot be served as asked. `status_code` and `code` shape the response."""

    status_code = 400
    code = "bad_request"
    default_message = "The request cannot be served."

    def __init__(self, message: str | None = None, *, code: str | None = None):
        self.message = message or self.default_message
        if code:
            self.code = code
        super().__init__(self.message)


class Forbidden(DomainError):
    """The caller may reach the endpoint but not do this to this object (a party to a task resolving its
    dispute: docs/decisions.md#staff-permissions)."""

    status_code = 403
    code = "permission_denied"
    default_message = "You do not have permission to perform this action."


class EmailUnverified(Forbidden):
    """What an account may do only once its e-mail address is verified: create API keys, start a payout
    account (docs/decisions.md#identity-and-authentication)."""

    code = "email_unverified"
    default_message = "Verify your e-mail address first: POST /api/v1/auth/email/verify with the mailed token."


class NotFound(DomainError):
    status_code = 404
    code = "not_found"
    default_message = "Not found."


class Conflict(DomainError):
    status_code = 409
    code = "conflict"
    default_message = "The request conflicts with the current state of the resource."


class InvalidState(Conflict):
    code = "invalid_state"
    default_message = "This action is not allowed in the resource's current state."


class StaleWrite(Conflict):
    code = "stale_write"
    default_message = "The resource was changed since you read it; fetch it again and retry."


class InputRejected(DomainError):
    """A well-formed value that a domain rule refuses (it needs the database to tell, so no serializer
    can): 422 in Pydantic's shape, `value_error` at `loc` (e.g. ["body", "competitor_names"])."""

    status_code = 422
    code = "value_error"
    default_message = "The value is not allowed."

    def __init__(self, message: str | None = None, *, loc: list[str | int]):
        super().__init__(message)
        self.loc = loc


class InsufficientCredits(DomainError):
    status_code = 402
    code = "insufficient_credits"
    default_message = "Not enough credits for this operation."


class PayloadTooLarge(DomainError):
    status_code = 413
    code = "payload_too_large"
    default_message = "The request body is too large."


class ProviderError(DomainError):
    """An external provider answered, but refused or failed the call."""

    status_code = 502
    code = "provider_error"
    default_message = "The upstream provider failed to process the request."


class ProviderUnavailable(DomainError):
    """An external provider is not configured or cannot be reached."""

    status_code = 503
    code = "provider_unavailable"
    default_message = "The upstream provider is unavailable."
