"""Writes for users and API keys."""

from __future__ import annotations

import hashlib
import hmac
import secrets
import string
from dataclasses import dataclass
from datetime import timedelta

from django.contrib.auth.password_validation import validate_password
from django.db import IntegrityError, transaction
from django.utils import timezone
from rest_framework import exceptions
from rest_framework_simplejwt.exceptions import TokenError
from rest_framework_simplejwt.token_blacklist.models import BlacklistedToken, OutstandingToken
from rest_framework_simplejwt.tokens import RefreshToken
from rest_framework_simplejwt.utils import datetime_from_epoch

from accounts.models import ApiKey, User, normalise_email
from core.errors import Conflict, NotFound

KEY_SCHEME = "bmk"
_PREFIX_ALPHABET = string.ascii_lowercase + string.digits
# last_used_at is kept to the minute: a write on every request would cost more than it tells.
LAST_USED_RESOLUTION = timedelta(minutes=1)


class EmailTaken(Conflict):
    code = "email_taken"
    default_message = "A user with this e-mail address already exists."


def user_create(*, email: str, password: str, is_staff: bool = False, credits: int | None = None) -> User:
    """A new account. Without `credits` it gets SIGNUP_CREDITS, as a grant in its credit ledger."""
    from assistant.services import credits_grant_signup

    email = normalise_email(email)
    if User.objects.filter(email=email).exists():
        raise EmailTaken()
    try:
        with transaction.atomic():
            user = User.objects.create_user(
                email, password, is_staff=is_staff, is_superuser=is_staff, credits=credits or 0
            )
            if credits is None:
                credits_grant_signup(user=user)
                user.refresh_from_db(fields=["credits"])
            return user
    except IntegrityError as exc:  # a concurrent registration won the race
        raise EmailTaken() from exc


class RefreshTokenRefused(exceptions.AuthenticationFailed):
    default_detail = "The refresh token is invalid, used or expired."


def refresh_token_rotate(*, raw: str) -> RefreshToken:
    """Spend a refresh token and return its successor; a token is spent at most once.

    simplejwt's own rotation checks the blacklist and then blacklists with `get_or_create`, so N
    concurrent refreshes of one token all pass. Here the spend is one INSERT into BlacklistedToken,
    whose `token` is unique (a one-to-one): of N concurrent requests exactly one inserts, every other
    gets an IntegrityError and a 401. That holds on PostgreSQL and SQLite alike.
    """
    try:
        refresh = RefreshToken(raw)  # signature, expiry, type and the blacklist (the cheap early refusal)
    except TokenError as exc:
        raise RefreshTokenRefused() from exc
    user = User.objects.filter(pk=refresh.payload.get("user_id"), is_active=True).first()
    if user is None:
        raise RefreshTokenRefused()
    outstanding, _ = OutstandingToken.objects.get_or_create(
        jti=refresh.payload["jti"],
        defaults={
            "user": user,
            "created_at": refresh.current_time,
            "token": raw,
            "expires_at": datetime_from_epoch(refresh.payload["exp"]),
        },
    )
    try:
        with transaction.atomic():
            BlacklistedToken.objects.create(token=outstanding)
    except IntegrityError as exc:  # spent already, maybe a moment ago by a concurrent request
        raise RefreshTokenRefused() from exc
    successor = RefreshToken.for_user(user)  # a new jti, recorded as outstanding
    return successor


def password_problems(*, password: str, email: str | None = None) -> list[str]:
    from django.core.exceptions import ValidationError

    try:
        validate_password(password, user=User(email=email or ""))
    except ValidationError as exc:
        return list(exc.messages)
    return []


@dataclass(frozen=True)
class IssuedKey:
    api_key: ApiKey
    raw: str  # shown once, never stored


def hash_key(raw: str) -> str:
    return hashlib.sha256(raw.encode()).hexdigest()


def api_key_create(*, user: User, name: str) -> IssuedKey:
    for _ in range(5):
        prefix = "".join(secrets.choice(_PREFIX_ALPHABET) for _ in range(8))
        raw = f"{KEY_SCHEME}_{prefix}_{secrets.token_urlsafe(32)}"
        try:
            with transaction.atomic():
                key = ApiKey.objects.create(user=user, name=name, prefix=prefix, key_hash=hash_key(raw))
            return IssuedKey(api_key=key, raw=raw)
        except IntegrityError:
            continue  # prefix collision: draw again
    raise RuntimeError("could not draw a unique API key prefix")


def api_key_revoke(*, user: User, key_id) -> None:
    updated = ApiKey.objects.active().filter(user=user, id=key_id).update(revoked_at=timezone.now())
    if not updated:
        raise NotFound()


def api_key_authenticate(raw: str) -> ApiKey | None:
    """The active key that `raw` is, or None. Constant-time on the secret part."""
    parts = raw.split("_", 2)
    if len(parts) != 3 or parts[0] != KEY_SCHEME or len(parts[1]) != 8:
        return None
    key = ApiKey.objects.active().select_related("user").filter(prefix=parts[1]).first()
    if key is None or not hmac.compare_digest(key.key_hash, hash_key(raw)):
        return None
    if not key.user.is_active:
        return None
    now = timezone.now()
    if key.last_used_at is None or now - key.last_used_at >= LAST_USED_RESOLUTION:
        ApiKey.objects.filter(pk=key.pk).update(last_used_at=now)
        key.last_used_at = now
    return key
