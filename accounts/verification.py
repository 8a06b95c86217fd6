"""E-mail verification: a mailed token proves the account's address (docs/decisions.md#identity-and-authentication).

- A new account (registration) and a changed address get a verification mail, queued after commit; the
  account asks again with `POST /auth/email/verify/resend`. At most one mail per account and address per
  EMAIL_VERIFICATION_MAIL_INTERVAL_SECONDS: a mailbox cannot be flooded through us.
- The token is Django's signing (`TimestampSigner`, salted for this use, SECRET_KEY_FALLBACKS honoured)
  over the user's id and a digest of the address as the account spells it: it expires after
  EMAIL_VERIFICATION_TIMEOUT_SECONDS and verifies only while the account still has that address, so a token mailed
  to an old address never verifies a new one. Using it again is harmless: the address is verified already.
- It is sent back by the account itself (`POST /auth/email/verify` with its JWT), not by whoever holds
  the mail: the owner of an address someone else registered, following the mail, verifies nothing.
- Verifying is one conditional UPDATE (`email_verified_at IS NULL` and the address unchanged): of
  concurrent verifications one wins, and only the winner grants the sign-up credits still due
  (`signup_grant_pending`), so they are granted once per account, never per address.
"""

from __future__ import annotations

import base64
import hashlib
import hmac
import logging
import time
import uuid

from django.conf import settings
from django.core import signing
from django.core.cache import cache
from django.core.mail import send_mail
from django.db import transaction
from django.template.loader import render_to_string
from django.utils import timezone

from accounts.models import User
from accounts.registry import credits_keeper
from accounts.throttle import LoginThrottled
from core.http.errors import InputRejected, InvalidState
from core.ops.enqueue import enqueue_after_commit

logger = logging.getLogger(__name__)

_SALT = "accounts.verification.email"
SUBJECT = "Verify your e-mail address"


class VerificationMailThrottled(LoginThrottled):
    """The same 429 `rate_limited` with `Retry-After` as the login throttle's, for one more mail too soon."""


def _address_digest(email: str) -> str:
    """Names the address in a token without spelling it out (a token may end up in a link's logs)."""
    return base64.urlsafe_b64encode(hashlib.sha256(email.encode()).digest()[:16]).decode().rstrip("=")


def email_verification_token_make(*, user: User) -> str:
    """`<user id hex>.<address digest>:<timestamp>:<signature>`: one field, URL-safe."""
    return signing.TimestampSigner(salt=_SALT).sign(f"{user.pk.hex}.{_address_digest(user.email)}")


def email_verification_queue(*, user: User, when_throttled: str = "skip") -> None:
    """Queue the verification mail to the user's current address, after commit. Within the interval of the
    last one to this account and address nothing is queued: `when_throttled="raise"` answers 429 with the
    seconds to wait (an explicit resend), "skip" queues nothing (an address changed back and forth)."""
    interval = settings.EMAIL_VERIFICATION_MAIL_INTERVAL_SECONDS
    if interval:
        slot = f"email-verification-mail:{user.pk}:{_address_digest(user.email)}"
        now = time.time()
        try:
            free = cache.add(slot, now + interval, interval)
            ends = free or cache.get(slot)
        except Exception:  # the cache is down: mail anyway, the path's rate limit still applies
            logger.warning("verification mail interval unavailable; not enforced", exc_info=True)
            free = True
        if not free:
            if when_throttled == "raise":
                raise VerificationMailThrottled(wait=max(1, int((ends or now + interval) - now + 0.999)))
            return
    requested_at = timezone.now().isoformat()
    enqueue_after_commit("accounts.tasks.email_verification_mail", str(user.pk), user.email, requested_at)


def email_verification_mail_send(*, user_id: str, email: str, requested_at: str) -> bool:
    """Mail a verification token to the account's address, if it still is `email` and unverified. Runs in a
    Celery task; once per request (`requested_at`)."""
    user = User.objects.filter(pk=user_id, is_active=True).first()
    if user is None or user.email != email or user.email_verified:
        return False
    if not cache.add(f"email-verification-sent:{user.pk}:{requested_at}", 1, 24 * 60 * 60):
        return False  # this request's mail went already
    token = email_verification_token_make(user=user)
    link = settings.EMAIL_VERIFICATION_LINK
    context = {
        "token": token,
        "link": link.format(token=token) if link else "",
        "verify_url": f"{settings.PUBLIC_BASE_URL}/api/v1/auth/email/verify",
        "base_url": settings.PUBLIC_BASE_URL,
        "days": max(1, settings.EMAIL_VERIFICATION_TIMEOUT_SECONDS // (24 * 60 * 60)),
    }
    send_mail(
        subject=SUBJECT,
        message=render_to_string("accounts/email_verification_email.txt", context),
        from_email=None,
        recipient_list=[user.mailing_address],
    )
    return True


def email_verification_resend(*, user: User) -> None:
    """Another verification mail to the account's address: 409 when it is verified, 429 within the interval."""
    if user.email_verified:
        raise InvalidState("The e-mail address is verified already.")
    email_verification_queue(user=user, when_throttled="raise")


def email_verify(*, user: User, token: str) -> User:
    """Verify the caller's address with a token mailed to it. 422 at body.token when the token is malformed,
    expired, another account's, or for an address the account no longer has. A token used again changes
    nothing. The caller must be the account (a JWT): whoever reads a mail they did not ask for cannot
    verify someone else's registration of their address by following it."""
    refused = InputRejected("The verification token is invalid, expired or for another address.", loc=["body", "token"])
    try:
        value = signing.TimestampSigner(salt=_SALT).unsign(token, max_age=settings.EMAIL_VERIFICATION_TIMEOUT_SECONDS)
        user_hex, _, digest = value.partition(".")
        user_id = uuid.UUID(hex=user_hex)
    except (signing.BadSignature, ValueError) as exc:
        raise refused from exc
    if user_id != user.pk or not hmac.compare_digest(digest, _address_digest(user.email)):
        raise refused
    email_verified_mark(user=user)
    return user


@transaction.atomic
def email_verified_mark(*, user: User) -> bool:
    """The account's current address is proven (a verification token, a completed reset, an operator):
    mark it verified and grant the sign-up credits if they are still due. True when this call verified it;
    an address that changed meanwhile stays unverified."""
    verified = User.objects.filter(pk=user.pk, email=user.email, email_verified_at__isnull=True).update(
        email_verified_at=timezone.now()
    )
    if verified and User.objects.filter(pk=user.pk, signup_grant_pending=True).update(signup_grant_pending=False):
        credits_keeper().grant(user=user)
    user.refresh_from_db(fields=["email_verified_at", "signup_grant_pending"])
    return bool(verified)
