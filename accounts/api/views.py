from __future__ import annotations

from drf_spectacular.utils import OpenApiResponse, extend_schema
from rest_framework import exceptions, status
from rest_framework.response import Response
from rest_framework_simplejwt.tokens import RefreshToken

from accounts.api.serializers import (
    ApiKeyInput,
    ApiKeySerializer,
    IssuedApiKeySerializer,
    RefreshInput,
    RegisterInput,
    TokenInput,
    TokenPairSerializer,
    UserSerializer,
)
from accounts.selectors import api_keys_of
from accounts.services import EmailTaken, api_key_create, api_key_revoke, refresh_token_rotate, user_create
from accounts.throttle import login_attempt_begin, login_attempt_forget, login_authenticate
from core.access import Access
from core.api.pagination import PageQuery, envelope, page, render_page
from core.api.schema import error_response
from core.api.views import ApiView
from core.idempotency import idempotent

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
            "A taken address is answered 409 and counts as one failed login for the client: over that "
            "limit the answer is 429 with `Retry-After`."
        ),
        responses={201: UserSerializer, 409: error_response("The e-mail address is taken.")},
    )
    def post(self, request):
        data = self.body(RegisterInput)
        # CONTRACT §2 answers a taken address 409, which tells that it exists; so each such answer
        # costs the client one failed login (accounts.throttle), and enumerating is as slow as guessing.
        attempt = login_attempt_begin(email=None, client_ip=client_ip_of(request))
        try:
            user = user_create(email=data["email"], password=data["password"])
        except EmailTaken:
            raise
        except Exception:
            login_attempt_forget(attempt)
            raise
        login_attempt_forget(attempt)
        return Response(UserSerializer(user).data, status=status.HTTP_201_CREATED)


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
        return Response(TokenPairSerializer.payload(RefreshToken.for_user(user)))


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
        tags=TAGS,
        parameters=[PageQuery],
        responses=envelope(ApiKeySerializer),
    )
    def get(self, request):
        params = self.query(PageQuery)
        rows, total, has_more = page(api_keys_of(request.user), **params)
        return Response(render_page(ApiKeySerializer, rows, total, has_more))

    @extend_schema(
        operation_id="api_keys_create",
        summary="Create an API key",
        tags=TAGS,
        request=ApiKeyInput,
        responses={201: IssuedApiKeySerializer},
    )
    @idempotent
    def post(self, request):
        data = self.body(ApiKeyInput)
        issued = api_key_create(user=request.user, name=data["name"])
        return Response(IssuedApiKeySerializer(issued).data, status=status.HTTP_201_CREATED)


class ApiKeyDetailView(ApiView):
    access = Access.USER

    @extend_schema(
        operation_id="api_keys_revoke",
        summary="Revoke an API key (effective at once)",
        tags=TAGS,
        responses={204: OpenApiResponse(description="Revoked.")},
    )
    def delete(self, request, key_id):
        api_key_revoke(user=request.user, key_id=key_id)
        return Response(status=status.HTTP_204_NO_CONTENT)
