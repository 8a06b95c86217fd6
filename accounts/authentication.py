"""One Bearer scheme for both credentials: `bmk_...` is an API key, anything else a JWT."""

from __future__ import annotations

from rest_framework import authentication, exceptions
from rest_framework_simplejwt.authentication import JWTAuthentication
from rest_framework_simplejwt.exceptions import InvalidToken, TokenError

from accounts.services import KEY_SCHEME, api_key_authenticate


class BearerAuthentication(authentication.BaseAuthentication):
    keyword = "Bearer"

    def __init__(self):
        self._jwt = JWTAuthentication()

    def authenticate(self, request):
        header = authentication.get_authorization_header(request).split()
        if not header or header[0].lower() != self.keyword.lower().encode():
            return None
        if len(header) != 2:
            raise exceptions.AuthenticationFailed("Invalid Authorization header: expected `Bearer <token>`.")
        try:
            token = header[1].decode()
        except UnicodeError as exc:
            raise exceptions.AuthenticationFailed("Invalid Authorization header.") from exc
        if token.startswith(KEY_SCHEME + "_"):
            key = api_key_authenticate(token)
            if key is None:
                raise exceptions.AuthenticationFailed("Invalid or revoked API key.")
            return key.user, key
        try:
            validated = self._jwt.get_validated_token(token.encode())
            user = self._jwt.get_user(validated)
        except (InvalidToken, TokenError, exceptions.AuthenticationFailed) as exc:
            raise exceptions.AuthenticationFailed("Invalid or expired access token.") from exc
        if not user.is_active:
            raise exceptions.AuthenticationFailed("User is inactive.")
        return user, validated

    def authenticate_header(self, request) -> str:
        return self.keyword
