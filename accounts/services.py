"""Writes for users and API keys."""

from __future__ import annotations

import hashlib
import hmac
import logging
import secrets
import string
from dataclasses import dataclass
from datetime import timedelta

from django.conf import settings
from django.contrib.auth.password_validation import validate_password
from django.contrib.auth.tokens import PasswordResetTokenGenerator
from django.core.cache import cache
from django.core.exceptions import ValidationError
from django.core.mail import send_mail
from django.db import IntegrityError, transaction
from django.template.loader import render_to_string
from django.utils import timezone
from django.utils.encoding import force_bytes
from django.utils.http import urlsafe_base64_decode, urlsafe_base64_encode
from rest_framework import exceptions
from rest_framework_simplejwt.exceptions import TokenError
from rest_framework_simplejwt.settings import api_settings
from rest_framework_simplejwt.token_blacklist.models import BlacklistedToken, OutstandingToken
from rest_framework_simplejwt.tokens import RefreshToken
from rest_framework_simplejwt.utils import datetime_from_epoch, get_md5_hash_password

from accounts.addresses import mailing_address
from accounts.closure import account_closing_steps_run
from accounts.models import ApiKey, User
from accounts.registry import credits_keeper
from accounts.review import review_items_of
from accounts.selectors import RECOVERY_REVIEW_PERIOD
from accounts.throttle import login_attempt_begin, login_attempt_forget
from accounts.verification import email_verification_queue, email_verified_mark
from core.api.validation import RequestValidationError, error
from core.http.errors import Conflict, EmailUnverified, InputRejected, NotFound
from core.ops.enqueue import enqueue_after_commit

logger = logging.getLogger(__name__)

KEY_SCHEME = "bmk"
_PREFIX_ALPHABET = string.ascii_lowercase + string.digits
# last_used_at is kept to the minute: a write on every request would cost more than it tells.
LAST_USED_RESOLUTION = timedelta(minutes=1)


class EmailTaken(Conflict):
    code = "email_taken"
    default_message = "A user with this e-mail address already exists."


def user_create(
    *,
    email: str,
    password: str,
    is_staff: bool = False,
    is_superuser: bool = False,
    credits: int | None = None,
    email_verified: bool = False,
) -> User:
    """A new account, its address kept as given. Unverified (a registration), it is mailed a verification
    token after commit; `email_verified` is for accounts an operator makes (`create_user`, the demo).
    Without `credits` it gets SIGNUP_CREDITS, as a grant in its credit ledger, once its address is verified
    (at once when created verified); with `credits`, that many at once instead. Credits are `assistant`'s,
    reached through accounts.registry. Staff is not a superuser: it has only the permissions given to it or
    its groups; a superuser is always staff too."""
    email = email.strip()
    if User.objects.with_address(email).exists():
        raise EmailTaken()
    try:
        with transaction.atomic():
            user = User.objects.create_user(
                email,
                password,
                is_staff=is_staff or is_superuser,
                is_superuser=is_superuser,
                email_verified_at=timezone.now() if email_verified else None,
                signup_grant_pending=credits is None and not email_verified,
            )
            if credits is not None or email_verified:
                credits_keeper().grant(user=user, amount=credits)
            if not email_verified:
                email_verification_queue(user=user)
            return user
    except IntegrityError as exc:  # a concurrent registration won the race
        raise EmailTaken() from exc


class RefreshTokenRefused(exceptions.AuthenticationFailed):
    default_detail = "The refresh token is invalid, used or expired."


def _revocation_claim_of(user: User) -> str:
    return get_md5_hash_password(user.password)


def refresh_token_issue(*, user: User, expires_at: int | None = None) -> RefreshToken:
    """A new refresh token, recorded as outstanding. `expires_at` (Unix seconds) caps its expiry: a rotated
    token keeps its chain's, so a session ends JWT_REFRESH_DAYS after its login however often it is
    refreshed (see docs/decisions.md#identity-and-authentication)."""
    token = RefreshToken.for_user(user)  # carries the password claim (SIMPLE_JWT CHECK_REVOKE_TOKEN)
    if expires_at is not None and expires_at < token["exp"]:
        token.payload["exp"] = expires_at
        OutstandingToken.objects.filter(jti=token[api_settings.JTI_CLAIM]).update(
            token=str(token), expires_at=datetime_from_epoch(expires_at)
        )
    return token


def refresh_token_rotate(*, raw: str) -> RefreshToken:
    """Spend a refresh token and return its successor; a token is spent at most once.

    simplejwt's own rotation checks the blacklist and then blacklists with `get_or_create`, so N
    concurrent refreshes of one token all pass. Here the spend is one INSERT into BlacklistedToken,
    whose `token` is unique (a one-to-one): of N concurrent requests exactly one inserts, every other
    gets an IntegrityError and a 401. That holds on PostgreSQL and SQLite alike. A token minted before
    the user's password last changed is refused, and the successor keeps the chain's expiry.
    """
    try:
        refresh = RefreshToken(raw)  # signature, expiry, type and the blacklist (the cheap early refusal)
    except TokenError as exc:
        raise RefreshTokenRefused() from exc
    user = User.objects.filter(pk=refresh.payload.get("user_id"), is_active=True).first()
    if user is None or refresh.payload.get(api_settings.REVOKE_TOKEN_CLAIM) != _revocation_claim_of(user):
        raise RefreshTokenRefused()
    outstanding = _outstanding(refresh, raw, user)
    try:
        with transaction.atomic():
            BlacklistedToken.objects.create(token=outstanding)
    except IntegrityError as exc:  # spent already, maybe a moment ago by a concurrent request
        raise RefreshTokenRefused() from exc
    return refresh_token_issue(user=user, expires_at=refresh.payload["exp"])


def _outstanding(refresh: RefreshToken, raw: str, user: User) -> OutstandingToken:
    outstanding, _ = OutstandingToken.objects.get_or_create(
        jti=refresh.payload["jti"],
        defaults={
            "user": user,
            "created_at": refresh.current_time,
            "token": raw,
            "expires_at": datetime_from_epoch(refresh.payload["exp"]),
        },
    )
    return outstanding


def refresh_token_revoke(*, user: User, raw: str) -> None:
    """Log out one session: blacklist this refresh token of `user` (422 when it is not a live one of theirs)."""
    try:
        refresh = RefreshToken(raw)
    except TokenError as exc:
        raise InputRejected("The refresh token is invalid, revoked or expired.", loc=["body", "refresh"]) from exc
    if str(refresh.payload.get(api_settings.USER_ID_CLAIM)) != str(user.pk):
        raise InputRejected("The refresh token is invalid, revoked or expired.", loc=["body", "refresh"])
    BlacklistedToken.objects.get_or_create(token=_outstanding(refresh, raw, user))


def refresh_tokens_revoke_all(*, user: User) -> int:
    """Blacklist every live refresh token of `user` (a password change, a reset, a deleted account)."""
    live = OutstandingToken.objects.filter(user=user, expires_at__gt=timezone.now(), blacklistedtoken__isnull=True)
    rows = [BlacklistedToken(token=token) for token in live]
    BlacklistedToken.objects.bulk_create(rows, ignore_conflicts=True)
    return len(rows)


def current_password_check(*, user: User, password: str, client_ip: str) -> None:
    """422 at body.current_password unless it is `user`'s; each wrong one costs a login guess (accounts.throttle)."""
    attempt = login_attempt_begin(email=user.email, client_ip=client_ip)
    if not user.check_password(password):
        raise InputRejected("The current password is wrong.", loc=["body", "current_password"])
    login_attempt_forget(attempt)


def _new_password_check(*, user: User, new_password: str) -> None:
    problems = password_problems(password=new_password, user=user)
    if problems:
        raise RequestValidationError([error("value_error", ["body", "new_password"], msg) for msg in problems])


def _password_set(*, user: User, new_password: str) -> None:
    _new_password_check(user=user, new_password=new_password)
    with transaction.atomic():
        user.set_password(new_password)
        user.save(update_fields=["password"])
        refresh_tokens_revoke_all(user=user)


def password_change(*, user: User, current_password: str, new_password: str, client_ip: str) -> RefreshToken:
    """Set a new password; every refresh token (and, by the password claim, every access token) of the
    user stops working. Returns a fresh session for the caller."""
    current_password_check(user=user, password=current_password, client_ip=client_ip)
    _password_set(user=user, new_password=new_password)
    return refresh_token_issue(user=user)


class _ResetTokens(PasswordResetTokenGenerator):
    """Django's reset token, which hashes the password (spent by the reset it allows) and expires after
    PASSWORD_RESET_TIMEOUT, over the user's reset serial too: mailing a new token makes the older ones
    worthless, so only the newest mail can reset the password."""

    def _make_hash_value(self, user, timestamp):
        return f"{super()._make_hash_value(user, timestamp)}#{user.password_reset_serial}"


reset_tokens = _ResetTokens()


def password_reset_token_make(*, user: User) -> str:
    """`<uidb64>.<token>`: one field that names the user and proves the mail was read. Bumps the user's
    reset serial, so every token made before this one stops working."""
    with transaction.atomic():
        locked = User.objects.select_for_update().get(pk=user.pk)
        locked.password_reset_serial += 1
        locked.save(update_fields=["password_reset_serial"])
    user.password_reset_serial = locked.password_reset_serial
    return f"{urlsafe_base64_encode(force_bytes(user.pk))}.{reset_tokens.make_token(locked)}"


def password_reset_request(*, email: str) -> None:
    """Queue the reset mail for this address, after commit, whether or not an account has it: the
    request does the same work for every address, so neither its answer nor its timing tells."""
    # An unreachable broker is logged by the helper; the answer stays 202 and the user asks again.
    enqueue_after_commit("accounts.tasks.password_reset_mail", email.strip())


def password_reset_mail_send(*, email: str) -> bool:
    """Mail a reset token to the active account with this address, if there is one (at most one mail per
    address per PASSWORD_RESET_MAIL_INTERVAL_SECONDS). Runs in a Celery task, so a request cannot time it."""
    user = User.objects.with_address(email).filter(is_active=True).first()
    if user is None or not user.has_usable_password():
        return False
    interval = settings.PASSWORD_RESET_MAIL_INTERVAL_SECONDS
    # Atomic in the shared cache (Redis), so one mark holds for every worker process and node.
    if interval and not cache.add(f"password-reset-mail:{user.pk}", 1, interval):
        return False
    token = password_reset_token_make(user=user)
    context = {
        "token": token,
        "link": settings.PASSWORD_RESET_LINK.format(token=token) if settings.PASSWORD_RESET_LINK else "",
        "confirm_url": f"{settings.PUBLIC_BASE_URL}/api/v1/auth/password/reset/confirm",
        "minutes": settings.PASSWORD_RESET_TIMEOUT // 60,
    }
    send_mail(
        subject="Reset your password",
        message=render_to_string("accounts/password_reset_email.txt", context),
        from_email=None,
        recipient_list=[user.mailing_address],
    )
    return True


def password_reset_confirm(*, token: str, new_password: str) -> None:
    """Set a new password with a token from the newest reset mail; single use, expiring. Whoever held the
    account before is shut out in the same transaction: every session and every API key is revoked. The
    mail reached the address, so the address is verified too (with the sign-up credits still due): how the
    owner of an address someone else registered takes the account. The owner is then mailed a notice
    listing where the account sends data (accounts.review), to check for what they did not set up (see
    docs/decisions.md#identity-and-authentication)."""
    refused = InputRejected("The reset token is invalid, used or expired.", loc=["body", "token"])
    uidb64, _, secret = token.partition(".")
    try:
        user_id = urlsafe_base64_decode(uidb64).decode()
        user = User.objects.filter(pk=user_id, is_active=True).first()
    except (ValueError, TypeError, UnicodeDecodeError, ValidationError):
        user = None
    if user is None or not reset_tokens.check_token(user, secret):
        raise refused
    _new_password_check(user=user, new_password=new_password)
    with transaction.atomic():
        # Checked again under the row's lock: of two confirms with one token only the first sets a password.
        user = User.objects.select_for_update().filter(pk=user.pk, is_active=True).first()
        if user is None or not reset_tokens.check_token(user, secret):
            raise refused
        now = timezone.now()
        user.set_password(new_password)
        user.password_reset_at = now
        user.save(update_fields=["password", "password_reset_at"])
        refresh_tokens_revoke_all(user=user)
        ApiKey.objects.active().filter(user=user).update(revoked_at=now)
        # The token hashes the address (Django's generator), so it is the one the mail went to.
        email_verified_mark(user=user)
        enqueue_after_commit("accounts.tasks.password_reset_notice_mail", str(user.pk))


def password_reset_notice_send(*, user_id: str) -> bool:
    """Tell the owner their password was reset, that every session and API key ended, and list the webhook
    subscriptions and agent endpoints the account sends data to. Runs in a Celery task; once per reset."""
    user = User.objects.filter(pk=user_id, is_active=True).first()
    if user is None or user.password_reset_at is None:
        return False
    if not cache.add(f"password-reset-notice:{user.pk}:{user.password_reset_at.timestamp()}", 1, 24 * 60 * 60):
        return False  # this reset's notice went already
    context = {
        "reset_at": user.password_reset_at,
        "items": review_items_of(user),
        "base_url": settings.PUBLIC_BASE_URL,
        "review_days": RECOVERY_REVIEW_PERIOD.days,
    }
    send_mail(
        subject="Your password was reset",
        message=render_to_string("accounts/password_reset_done_email.txt", context),
        from_email=None,
        recipient_list=[user.mailing_address],
    )
    return True


def user_update(*, user: User, current_password: str, client_ip: str, email: str | None = None) -> User:
    """Change what a user may change of themselves: the e-mail, with the current password. A taken address
    is a 409, which tells that it exists, so each one costs the client a failed login, as at registration
    (docs/decisions.md#security). Any other spelling is a new address: unverified until the token mailed
    to it comes back; the old address is told of the change once it is committed."""
    current_password_check(user=user, password=current_password, client_ip=client_ip)
    if email is None or email.strip() == user.email:
        return user
    old_email, old_verified_at, new_email = user.email, user.email_verified_at, email.strip()
    attempt = login_attempt_begin(email=None, client_ip=client_ip)  # counted before the address is looked up
    if User.objects.with_address(new_email).exclude(pk=user.pk).exists():
        raise EmailTaken()
    try:
        with transaction.atomic():
            user.email, user.email_verified_at = new_email, None
            user.save(update_fields=["email", "email_verified_at"])
            changed_at = timezone.now().isoformat(timespec="seconds")
            enqueue_after_commit("accounts.tasks.email_change_notice_mail", str(user.pk), old_email, changed_at)
            email_verification_queue(user=user)
    except IntegrityError as exc:  # a concurrent change or registration took it meanwhile
        user.email, user.email_verified_at = old_email, old_verified_at
        raise EmailTaken() from exc
    except Exception:
        user.email, user.email_verified_at = old_email, old_verified_at
        login_attempt_forget(attempt)
        raise
    login_attempt_forget(attempt)
    return user


def email_change_notice_send(*, user_id: str, old_email: str, changed_at: str) -> bool:
    """Tell the old address that the account's e-mail changed (not to what). Runs in a Celery task; once."""
    if not cache.add(f"email-change-notice:{user_id}:{changed_at}", 1, 24 * 60 * 60):
        return False
    context = {"user_id": user_id, "changed_at": changed_at, "base_url": settings.PUBLIC_BASE_URL}
    send_mail(
        subject="The e-mail address of your account was changed",
        message=render_to_string("accounts/email_changed_email.txt", context),
        from_email=None,
        recipient_list=[mailing_address(old_email)],
    )
    return True


def user_delete(*, user: User, current_password: str, client_ip: str) -> None:
    """Close an account: anonymised, never usable again; its API keys and sessions revoked at once, and in
    the same transaction every app winds down the flows it started (accounts.closure; a step may refuse
    with a 409). A close repeated or racing another runs once (see docs/decisions.md#closing-an-account)."""
    current_password_check(user=user, password=current_password, client_ip=client_ip)
    with transaction.atomic():
        # The user's row first: of two closes of one account the second waits here, then finds it closed.
        if not User.objects.select_for_update().filter(pk=user.pk, is_active=True).exists():
            return
        account_closing_steps_run(user=user)
        user.email = f"deleted-{user.pk.hex}@deleted.invalid"
        user.is_active = False
        user.is_staff = False
        user.is_superuser = False
        user.set_unusable_password()
        user.save(update_fields=["email", "is_active", "is_staff", "is_superuser", "password"])
        ApiKey.objects.active().filter(user=user).update(revoked_at=timezone.now())
        refresh_tokens_revoke_all(user=user)


def password_problems(*, password: str, email: str | None = None, user: User | None = None) -> list[str]:
    try:
        validate_password(password, user=user or User(email=email or ""))
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
    """A new key; 403 `email_unverified` until the account's address is verified (a key outlives sessions,
    so it is not for an account that may be squatting someone's address)."""
    if not user.email_verified:
        raise EmailUnverified()
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
