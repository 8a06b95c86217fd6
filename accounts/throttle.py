"""Password guessing: failed logins counted per account and per client (issue 14, CONTRACT §5's extra).

On top of the path buckets of core.ratelimit, two fixed-window counters in the rate-limit cache:

- per account: the normalised e-mail (stripped, lower-cased, hashed), counted the same whether or not
  an account has that address, so the answers never tell which exist;
- per client: the client address, an IPv6 client as its /64 (core.ratelimit.client_key).

Every attempt is counted *before* the password is checked (one atomic increment per counter, so N
concurrent guesses cannot all slip under the cap), and a successful login gives its count back: only
failures use up the allowance. Over either cap the answer is 429 with `Retry-After` and the password
is not even checked, so a right guess cannot be told from a wrong one. A staff override for the
client (rule `login_client`, or `*`) raises the client cap, e.g. for an office behind one address.
"""

from __future__ import annotations

import hashlib
import logging
import math
import time
from dataclasses import dataclass

from django.conf import settings
from django.core.cache import caches
from rest_framework import exceptions, status

from core.ratelimit import MINUTE, Rule, client_key, override_limit

logger = logging.getLogger(__name__)

LOGIN_ACCOUNT = Rule("login_account", 10, 15 * MINUTE)
LOGIN_CLIENT = Rule("login_client", 30, 15 * MINUTE)


class LoginThrottled(exceptions.APIException):
    status_code = status.HTTP_429_TOO_MANY_REQUESTS
    default_detail = "Rate limit exceeded. Try again later."
    default_code = "rate_limited"

    def __init__(self, wait: int):
        super().__init__()
        self.wait = wait


def normalise_email(email: str) -> str:
    return (email or "").strip().lower()


@dataclass(frozen=True)
class LoginAttempt:
    keys: tuple[str, ...]  # the counters this attempt was added to


def _counters():
    return caches[settings.RATELIMIT_USE_CACHE]


def _window(rule: Rule, now: float) -> tuple[int, int]:
    start = int(now // rule.period * rule.period)
    return start, start + rule.period


def _count(key: str, period: int) -> int:
    cache = _counters()
    if cache.add(key, 1, period + 5):
        return 1
    return cache.incr(key)


def login_attempt_begin(*, email: str | None, client_ip: str) -> LoginAttempt:
    """Count one login attempt; LoginThrottled when the account or the client is over its cap.

    `email=None` counts the client only (registration: a taken address costs a guess, see RegisterView).
    """
    now = time.time()
    buckets = [
        (LOGIN_CLIENT, client_key(client_ip), override_limit(client_ip, LOGIN_CLIENT.name) or LOGIN_CLIENT.limit)
    ]
    if email is not None:
        account = hashlib.sha256(normalise_email(email).encode()).hexdigest()[:32]
        buckets.insert(0, (LOGIN_ACCOUNT, account, LOGIN_ACCOUNT.limit))
    counted = []
    retry_at = 0
    for rule, ident, limit in buckets:
        start, end = _window(rule, now)
        key = f"login:{rule.name}:{start}:{ident}"
        try:
            count = _count(key, rule.period)
        except Exception:  # the counter store is down: the path buckets still apply
            logger.warning("login throttle counter unavailable; attempt not counted", exc_info=True)
            continue
        counted.append(key)
        if count > limit:
            retry_at = max(retry_at, end)
    attempt = LoginAttempt(keys=tuple(counted))
    if retry_at:
        login_attempt_forget(attempt)  # a refused attempt checks no password: it is not a guess
        raise LoginThrottled(wait=max(1, math.ceil(retry_at - now)))
    return attempt


def login_attempt_forget(attempt: LoginAttempt) -> None:
    """Give an attempt's counts back: the login succeeded (or never checked a password)."""
    cache = _counters()
    for key in attempt.keys:
        try:
            cache.decr(key)
        except ValueError:  # the window ended meanwhile: nothing to give back
            pass
        except Exception:
            logger.warning("login throttle counter unavailable", exc_info=True)


def login_authenticate(*, request, email: str, password: str, client_ip: str):
    """The user for these credentials or None, counted by the login throttle (LoginThrottled over it)."""
    from django.contrib.auth import authenticate

    attempt = login_attempt_begin(email=email, client_ip=client_ip)
    user = authenticate(request, email=email, password=password)
    if user is not None:
        login_attempt_forget(attempt)
    return user
