"""One Bearer scheme for both credentials: `bmk_...` is an API key, anything else a JWT."""

from __future__ import annotations

import uuid

from django.core.signals import setting_changed
from django.db import connections
from django.dispatch import receiver
from rest_framework import authentication, exceptions
from rest_framework_simplejwt.authentication import JWTAuthentication
from rest_framework_simplejwt.exceptions import InvalidToken, TokenError
from rest_framework_simplejwt.settings import api_settings
from rest_framework_simplejwt.tokens import AccessToken
from rest_framework_simplejwt.utils import aware_utcnow, get_md5_hash_password

from accounts.models import User
from accounts.services import KEY_SCHEME, api_key_authenticate
from core.db.precompiled import PrecompiledQuery

_USER_ID = uuid.UUID(int=0)  # stands for the token's user id in the compiled lookup
_FIELDS = [field.attname for field in User._meta.concrete_fields]
# The user row of every JWT request: compiled once per process (core.db.precompiled), loaded as the ORM loads it.
_USER_BY_ID = PrecompiledQuery(lambda user_id: User.objects.filter(**{api_settings.USER_ID_FIELD: user_id}), [_USER_ID])


# Access tokens whose signature and claims this process has checked, by their bytes: a client sends the
# same token for its whole lifetime, and checking the signature again was a tenth of a list request's CPU.
# Each use still checks the expiry (and the rest of simplejwt's `verify`); the user row is read every time.
_VERIFIED_MAX = 4096  # a few MB per process at most
_verified: dict[bytes, dict] = {}


@receiver(setting_changed)
def _forget_verified(*, setting: str, **kwargs) -> None:
    if setting == "SIMPLE_JWT":
        _verified.clear()


class _JWTAuthentication(JWTAuthentication):
    """simplejwt's, with the user row read through a compiled query: the same checks, the same errors."""

    def get_validated_token(self, raw_token: bytes):
        payload = _verified.get(raw_token)
        if payload is not None:
            token = AccessToken.__new__(AccessToken)  # as AccessToken(raw_token), without decoding it again
            token.token, token.current_time, token.payload = raw_token, aware_utcnow(), dict(payload)
            try:
                token.verify()
                return token
            except TokenError:  # expired since: simplejwt's own path gives its own error
                _verified.pop(raw_token, None)
        token = super().get_validated_token(raw_token)
        if type(token) is AccessToken:
            if len(_verified) >= _VERIFIED_MAX:
                _verified.clear()
            _verified[raw_token] = dict(token.payload)
        return token

    def get_user(self, validated_token):
        try:
            user_id = validated_token[api_settings.USER_ID_CLAIM]
        except KeyError as exc:
            raise InvalidToken("Token contained no recognizable user identification") from exc
        field = User._meta.get_field(api_settings.USER_ID_FIELD)
        value = field.get_db_prep_value(user_id, connections[User.objects.db], prepared=False)  # as the ORM's `get`
        rows = _USER_BY_ID.rows([value])
        if not rows:
            raise exceptions.AuthenticationFailed("User not found", code="user_not_found")
        user = User.from_db(User.objects.db, _FIELDS, rows[0])
        if api_settings.CHECK_USER_IS_ACTIVE and not user.is_active:
            raise exceptions.AuthenticationFailed("User is inactive", code="user_inactive")
        # simplejwt's own check, on the row already read: a token minted before the last password change
        # (or the account's deletion) is refused (see docs/decisions.md#identity-and-authentication).
        if api_settings.CHECK_REVOKE_TOKEN and validated_token.get(
            api_settings.REVOKE_TOKEN_CLAIM
        ) != get_md5_hash_password(user.password):
            raise exceptions.AuthenticationFailed("The user's password has been changed.", code="password_changed")
        return user


class BearerAuthentication(authentication.BaseAuthentication):
    keyword = "Bearer"

    def __init__(self):
        self._jwt = _JWTAuthentication()

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
