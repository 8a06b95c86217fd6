"""Password guessing: failed logins counted per account, per (account, client) and per client.

On top of the path buckets of core.http.ratelimit, fixed-window counters in the rate-limit cache
(see docs/operations.md#login-throttling):

- per (account, client): every guess at one account from one client (an IPv6 client as its /64);
- per account: the account actually matched by the address's key (accounts.addresses.normalise_email),
  or the key when none has it, so the answers never tell which exist. Each client adds
  at most ACCOUNT_SHARE_PER_CLIENT of its guesses here, so guesses from one address can never lock the
  owner out from another; only guesses from several addresses together can;
- per client: the client address, across accounts.

Every attempt is counted *before* the password is checked (one atomic increment per counter, so N
concurrent guesses cannot all slip under the cap), and a successful login gives its counts back: only
failures use up the allowance. Over any cap the answer is 429 with `Retry-After` and the password is
not even checked, so a right guess cannot be told from a wrong one. A staff override for the client
(rule `login_client`, or `*`) raises the client cap, e.g. for an office behind one address.
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

from accounts.models import User, normalise_email
from core.http.ratelimit import client_key, override_limit
from core.http.ratelimit_rules import MINUTE, Rule

logger = logging.getLogger(__name__)

LOGIN_ACCOUNT = Rule("login_account", 10, 15 * MINUTE)
LOGIN_ACCOUNT_CLIENT = Rule("login_account_client", 10, 15 * MINUTE)
LOGIN_CLIENT = Rule("login_client", 30, 15 * MINUTE)
# How many of one client's failures count against the account: below LOGIN_ACCOUNT.limit, so one address
# alone never locks the account for everyone else.
ACCOUNT_SHARE_PER_CLIENT = 3


class LoginThrottled(exceptions.APIException):
    status_code = status.HTTP_429_TOO_MANY_REQUESTS
    default_detail = "Rate limit exceeded. Try again later."
    default_code = "rate_limited"

    def __init__(self, wait: int):
        super().__init__()
        self.wait = wait


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


def _account_ident(email: str) -> str:
    """The account an e-mail names: its user id when one matches, else the hashed normalised address."""
    normal = normalise_email(email)
    user_id = User.objects.with_address(email).values_list("id", flat=True).first()
    if user_id is not None:
        return f"u{user_id.hex}"
    return "e" + hashlib.sha256(normal.encode()).hexdigest()[:32]


def login_attempt_begin(*, email: str | None, client_ip: str) -> LoginAttempt:
    """Count one login attempt; LoginThrottled when the account, the pair or the client is over its cap.

    `email=None` counts the client only (registration: a taken address costs a guess, see RegisterView).
    """
    now = time.time()
    client = client_key(client_ip)
    counted: list[str] = []
    retry_at = 0

    def count(rule: Rule, ident: str, limit: int, *, peek: bool = False) -> int | None:
        nonlocal retry_at
        start, end = _window(rule, now)
        key = f"login:{rule.name}:{start}:{ident}"
        try:
            if peek:
                value = (_counters().get(key) or 0) + 1  # as if counted: this attempt would be one more
            else:
                value = _count(key, rule.period)
                counted.append(key)
        except Exception:  # the counter store is down: the path buckets still apply
            logger.warning("login throttle counter unavailable; attempt not counted", exc_info=True)
            return None
        if value > limit:
            retry_at = max(retry_at, end)
        return value

    if email is not None:
        account = _account_ident(email)
        pair = count(LOGIN_ACCOUNT_CLIENT, f"{account}:{client}", LOGIN_ACCOUNT_CLIENT.limit)
        # A client's first few failures count against the account; later ones only against the pair.
        count(LOGIN_ACCOUNT, account, LOGIN_ACCOUNT.limit, peek=pair is not None and pair > ACCOUNT_SHARE_PER_CLIENT)
    limit = override_limit(client_ip, LOGIN_CLIENT.name) or LOGIN_CLIENT.limit
    count(LOGIN_CLIENT, client, limit)
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
