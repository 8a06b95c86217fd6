from __future__ import annotations

from drf_spectacular.utils import OpenApiResponse, extend_schema
from rest_framework import exceptions, status
from rest_framework.response import Response

from accounts.api.serializers import (
    AcceptedSerializer,
    ApiKeyInput,
    ApiKeySerializer,
    CurrentPasswordInput,
    EmailVerifyInput,
    IssuedApiKeySerializer,
    LogoutInput,
    PasswordChangeInput,
    PasswordResetConfirmInput,
    PasswordResetInput,
    RefreshInput,
    RegisterInput,
    TokenInput,
    TokenPairSerializer,
    UserSerializer,
    UserUpdateInput,
)
from accounts.selectors import RECOVERY_REVIEW_PERIOD, api_keys_of, api_keys_total
from accounts.services import (
    EmailTaken,
    api_key_create,
    api_key_revoke,
    password_change,
    password_reset_confirm,
    password_reset_request,
    refresh_token_issue,
    refresh_token_revoke,
    refresh_token_rotate,
    user_create,
    user_delete,
    user_update,
)
from accounts.throttle import login_attempt_begin, login_attempt_forget, login_authenticate
from accounts.verification import email_verification_resend, email_verify
from core.api.pagination import PageQuery, envelope, keyset_page, render_page
from core.api.schema import AutoSchema, error_response
from core.api.views import ApiView
from core.http.access import Access
from core.http.idempotency import idempotent, replay_only_while

TAGS = ["auth"]


def client_ip_of(request) -> str:
    return getattr(request._request, "client_ip", None) or request.META.get("REMOTE_ADDR", "")


class RegisterView(ApiView):
    access = Access.PUBLIC

    @extend_schema(
        operation_id="auth_register",
        summary="Create an account",
        tags=TAGS,
        request=RegisterInput,
        description=(
            "The address is kept as given (its domain must be a valid IDNA 2008 name) and mailed a verification "
            "token; the account starts unverified (`email_verified` false): no API keys, no payout account, and "
            "its sign-up credits come once the address is verified (`POST /auth/email/verify`). If a taken "
            "address is yours, a password reset takes the account over. "
            "A taken address is answered 409 and counts as one failed login for the client: over that "
            "limit the answer is 429 with `Retry-After`. A client address registers at most 10 times an hour "
            "(every answer counts)."
        ),
        responses={201: UserSerializer, 409: error_response("The e-mail address is taken.")},
    )
    def post(self, request):
        data = self.body(RegisterInput)
        # A taken address is a 409 (docs/decisions.md#identity-and-authentication), which tells that it
        # exists; so each such answer costs the client one failed login (accounts.throttle), and
        # enumerating is as slow as guessing.
        attempt = login_attempt_begin(email=None, client_ip=client_ip_of(request))
        try:
            user = user_create(email=data["email"], password=data["password"])
        except EmailTaken:
            raise
        except Exception:
            login_attempt_forget(attempt)
            raise
        login_attempt_forget(attempt)
        return self.created(UserSerializer(user).data, "auth-me")


class TokenView(ApiView):
    access = Access.PUBLIC

    @extend_schema(
        operation_id="auth_token",
        summary="Obtain an access and a refresh token",
        tags=TAGS,
        request=TokenInput,
        description=(
            "Failed attempts are limited per account (the e-mail, whether or not it has an account) and per "
            "client (an IPv6 client per /64); over either limit the answer is 429 with `Retry-After`."
        ),
        responses={200: TokenPairSerializer, 401: error_response("Wrong e-mail or password.")},
    )
    def post(self, request):
        data = self.body(TokenInput)
        user = login_authenticate(
            request=request, email=data["email"], password=data["password"], client_ip=client_ip_of(request)
        )
        if user is None:
            raise exceptions.AuthenticationFailed("Wrong e-mail or password.")
        return Response(TokenPairSerializer.payload(refresh_token_issue(user=user)))


class TokenRefreshView(ApiView):
    access = Access.PUBLIC

    @extend_schema(
        operation_id="auth_token_refresh",
        summary="Exchange a refresh token for a new pair",
        description="Refresh tokens rotate: the one sent is blacklisted and cannot be used again.",
        tags=TAGS,
        request=RefreshInput,
        responses={200: TokenPairSerializer, 401: error_response("The refresh token is invalid, used or expired.")},
    )
    def post(self, request):
        data = self.body(RefreshInput)
        return Response(TokenPairSerializer.payload(refresh_token_rotate(raw=data["refresh"])))


class ApiKeyListView(ApiView):
    access = Access.USER

    @extend_schema(
        operation_id="api_keys_list",
        summary="List your active API keys",
        description=(
            "Keys that are not revoked, newest first: name, prefix and dates; the raw key is never shown again."
        ),
        tags=TAGS,
        parameters=[PageQuery],
        responses=envelope(ApiKeySerializer),
    )
    def get(self, request):
        params = self.query(PageQuery)
        rows, total, has_more, next_cursor = keyset_page(
            api_keys_of(request.user), **params, total=api_keys_total(request.user)
        )
        return Response(render_page(ApiKeySerializer, rows, total, has_more, next_cursor=next_cursor))

    @extend_schema(
        operation_id="api_keys_create",
        summary="Create an API key",
        description=(
            "Returns the raw key (`bmk_...`) once, in `key`; only its hash is stored. Send it as `Authorization: "
            "Bearer <key>` on the operations that accept API keys. Needs a verified e-mail address (`GET "
            "/auth/me` `email_verified`), else 403 `email_unverified`."
        ),
        tags=TAGS,
        request=ApiKeyInput,
        responses={
            201: IssuedApiKeySerializer,
            403: error_response(
                "An API key (`api_key_not_allowed`), or the e-mail address is not verified yet (`email_unverified`)."
            ),
        },
    )
    @idempotent
    def post(self, request):
        data = self.body(ApiKeyInput)
        issued = api_key_create(user=request.user, name=data["name"])
        response = self.created(IssuedApiKeySerializer(issued).data, "api-key-detail", key_id=issued.api_key.id)
        # A retry gets the raw key again only while the key is live (see docs/decisions.md#retries-and-idempotency-key).
        return replay_only_while(response, guard="api_key", object_id=issued.api_key.id)


class ApiKeyDetailView(ApiView):
    access = Access.USER

    @extend_schema(
        operation_id="api_keys_revoke",
        summary="Revoke an API key (effective at once)",
        description=(
            "Every later request with the key is 401 at once; a key that is already revoked, or not yours, is 404."
        ),
        tags=TAGS,
        responses={204: OpenApiResponse(description="Revoked.")},
    )
    def delete(self, request, key_id):
        api_key_revoke(user=request.user, key_id=key_id)
        return Response(status=status.HTTP_204_NO_CONTENT)


class _BodyOnDeleteSchema(AutoSchema):
    """drf-spectacular documents bodies on POST/PUT/PATCH only; `DELETE /auth/me` takes one (the password)."""

    def _get_request_body(self, direction="request"):
        if self.method != "DELETE":
            return super()._get_request_body(direction)
        self.method = "POST"
        try:
            return super()._get_request_body(direction)
        finally:
            self.method = "DELETE"


_WRONG_PASSWORD = (
    " A wrong `current_password` is a 422 at `body.current_password` and counts as a failed login "
    "(over the limit: 429 with `Retry-After`)."
)


class MeView(ApiView):
    access = Access.USER
    schema = _BodyOnDeleteSchema()

    @extend_schema(
        operation_id="auth_me",
        summary="Your account",
        description=(
            "The account the token belongs to: id, e-mail address (as given) and whether it is verified, staff "
            "flag, credit balance and when it was created; for "
            f"{RECOVERY_REVIEW_PERIOD.days} days after a password reset, `review_after_recovery` "
            "lists the webhook subscriptions and agent endpoints the account sends data to, for you to check "
            "that you set up each one (else it is null)."
        ),
        tags=TAGS,
        responses={200: UserSerializer},
    )
    def get(self, request):
        return Response(UserSerializer(request.user).data)

    @extend_schema(
        operation_id="auth_me_update",
        summary="Change your e-mail address",
        description=(
            "Needs the current password. The address is kept as given (accounts are told apart by its normal "
            "form: the local part NFKC and casefolded, the domain as IDNA 2008); any new spelling is unverified "
            "until the token mailed to it comes back, and the old address is mailed a notice of the change. A "
            "taken address is a 409 and counts as one failed login for the client (over the limit: 429 with "
            "`Retry-After`)." + _WRONG_PASSWORD
        ),
        tags=TAGS,
        request=UserUpdateInput,
        responses={200: UserSerializer, 409: error_response("The e-mail address is taken.")},
    )
    def patch(self, request):
        data = self.body(UserUpdateInput)
        user = user_update(
            user=request.user,
            current_password=data["current_password"],
            email=data.get("email"),
            client_ip=client_ip_of(request),
        )
        return Response(UserSerializer(user).data)

    @extend_schema(
        operation_id="auth_me_delete",
        summary="Close your account",
        description=(
            "Needs the current password in the body. The account is anonymised and can never log in again; "
            "every API key and every session (refresh and access token) stops working at once. In the same "
            "transaction its pending bids are withdrawn, its open tasks cancelled, its webhook subscriptions "
            "disabled and its teams cancelled at the end of their period; a task it paid for keeps running. "
            "While one of its agents owes a paid task's work (delivering, or in review), nothing is closed: 409 "
            "`deliveries_owed`." + _WRONG_PASSWORD
        ),
        tags=TAGS,
        request=CurrentPasswordInput,
        responses={
            204: OpenApiResponse(description="Closed."),
            409: error_response("One of the account's agents owes a paid task's work."),
        },
    )
    def delete(self, request):
        data = self.body(CurrentPasswordInput)
        user_delete(user=request.user, current_password=data["current_password"], client_ip=client_ip_of(request))
        return Response(status=status.HTTP_204_NO_CONTENT)


class PasswordChangeView(ApiView):
    access = Access.USER

    @extend_schema(
        operation_id="auth_password_change",
        summary="Change your password",
        description=(
            "Every refresh and access token of the account stops working, this one's too; the answer is a "
            "fresh pair for the caller. The new password must pass the password rules (else 422 at "
            "`body.new_password`)." + _WRONG_PASSWORD
        ),
        tags=TAGS,
        request=PasswordChangeInput,
        responses={200: TokenPairSerializer},
    )
    def post(self, request):
        data = self.body(PasswordChangeInput)
        refresh = password_change(
            user=request.user,
            current_password=data["current_password"],
            new_password=data["new_password"],
            client_ip=client_ip_of(request),
        )
        return Response(TokenPairSerializer.payload(refresh))


class LogoutView(ApiView):
    access = Access.USER

    @extend_schema(
        operation_id="auth_logout",
        summary="End a session (revoke its refresh token)",
        description=(
            "The refresh token is blacklisted; its access tokens expire on their own (at most "
            "`expires_in` seconds). A token that is not a live refresh token of yours is a 422 at `body.refresh`."
        ),
        tags=TAGS,
        request=LogoutInput,
        responses={204: OpenApiResponse(description="Logged out.")},
    )
    def post(self, request):
        data = self.body(LogoutInput)
        refresh_token_revoke(user=request.user, raw=data["refresh"])
        return Response(status=status.HTTP_204_NO_CONTENT)


RESET_ACCEPTED = "If an account has this address, a reset token has been sent to it."


class PasswordResetView(ApiView):
    access = Access.PUBLIC

    @extend_schema(
        operation_id="auth_password_reset",
        summary="Mail a password reset token",
        description=(
            "Always 202 with the same body, whether or not an account has the address: the lookup and the "
            "mail happen in a background task. At most one mail per account per minute."
        ),
        tags=TAGS,
        request=PasswordResetInput,
        responses={202: AcceptedSerializer},
    )
    def post(self, request):
        password_reset_request(email=self.body(PasswordResetInput)["email"])
        return Response({"detail": RESET_ACCEPTED}, status=status.HTTP_202_ACCEPTED)


class PasswordResetConfirmView(ApiView):
    access = Access.PUBLIC

    @extend_schema(
        operation_id="auth_password_reset_confirm",
        summary="Set a new password with a reset token",
        description=(
            "The token from the newest reset mail works once and expires (an hour by default); mailing a new "
            "one makes the older ones invalid. Every refresh and access token and every API key of the account "
            "stops working; log in again. The owner is mailed a notice listing the account's webhook "
            "subscriptions and agent endpoints to review (so does `review_after_recovery` on `GET /auth/me`). "
            "An invalid, used, superseded or expired token is a 422 at `body.token`; a password the rules "
            "refuse a 422 at `body.new_password`."
        ),
        tags=TAGS,
        request=PasswordResetConfirmInput,
        responses={204: OpenApiResponse(description="The password is set.")},
    )
    def post(self, request):
        data = self.body(PasswordResetConfirmInput)
        password_reset_confirm(token=data["token"], new_password=data["new_password"])
        return Response(status=status.HTTP_204_NO_CONTENT)


class EmailVerifyView(ApiView):
    access = Access.USER

    @extend_schema(
        operation_id="auth_email_verify",
        summary="Verify your e-mail address with the mailed token",
        description=(
            "Send the token from a verification mail, logged in to the account it was mailed for (a JWT): the "
            "answer is the account, `email_verified` true and, the first time, its sign-up credits granted. A "
            "token works until it expires (3 days by default) while the account still has the address it was "
            "mailed to; sending it again changes nothing. A malformed or expired token, another account's, or "
            "one mailed to an earlier address is a 422 at `body.token`."
        ),
        tags=TAGS,
        request=EmailVerifyInput,
        responses={200: UserSerializer},
    )
    def post(self, request):
        data = self.body(EmailVerifyInput)
        return Response(UserSerializer(email_verify(user=request.user, token=data["token"])).data)


VERIFICATION_ACCEPTED = "A verification token is being mailed to the account's address."


class EmailVerifyResendView(ApiView):
    access = Access.USER

    @extend_schema(
        operation_id="auth_email_verify_resend",
        summary="Mail another verification token",
        description=(
            "To the account's current address, by a background task. At most one mail per account and address "
            "a minute: sooner is a 429 with `Retry-After`. An address that is verified already is a 409 "
            "`invalid_state`."
        ),
        tags=TAGS,
        request=None,
        responses={202: AcceptedSerializer, 409: error_response("The address is verified already (`invalid_state`).")},
    )
    def post(self, request):
        email_verification_resend(user=request.user)
        return Response({"detail": VERIFICATION_ACCEPTED}, status=status.HTTP_202_ACCEPTED)
