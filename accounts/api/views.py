from __future__ import annotations

from django.contrib.auth import authenticate
from drf_spectacular.utils import OpenApiResponse, extend_schema
from rest_framework import exceptions, status
from rest_framework.response import Response
from rest_framework_simplejwt.exceptions import TokenError
from rest_framework_simplejwt.serializers import TokenRefreshSerializer
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
from accounts.services import api_key_create, api_key_revoke, user_create
from core.access import Access
from core.api.pagination import PageQuery, envelope, page, render_page
from core.api.schema import error_response
from core.api.views import ApiView
from core.idempotency import idempotent

TAGS = ["auth"]


class RegisterView(ApiView):
    access = Access.PUBLIC

    @extend_schema(
        operation_id="auth_register",
        summary="Create an account",
        tags=TAGS,
        request=RegisterInput,
        responses={201: UserSerializer, 409: error_response("The e-mail address is taken.")},
    )
    def post(self, request):
        data = self.body(RegisterInput)
        user = user_create(email=data["email"], password=data["password"])
        return Response(UserSerializer(user).data, status=status.HTTP_201_CREATED)


class TokenView(ApiView):
    access = Access.PUBLIC

    @extend_schema(
        operation_id="auth_token",
        summary="Obtain an access and a refresh token",
        tags=TAGS,
        request=TokenInput,
        responses={200: TokenPairSerializer, 401: error_response("Wrong e-mail or password.")},
    )
    def post(self, request):
        data = self.body(TokenInput)
        user = authenticate(request, email=data["email"], password=data["password"])
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
        serializer = TokenRefreshSerializer(data={"refresh": data["refresh"]})
        try:
            serializer.is_valid(raise_exception=True)
        except (TokenError, exceptions.AuthenticationFailed, exceptions.ValidationError) as exc:
            raise exceptions.AuthenticationFailed("The refresh token is invalid, used or expired.") from exc
        return Response(TokenPairSerializer.payload(RefreshToken(serializer.validated_data["refresh"])))


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
