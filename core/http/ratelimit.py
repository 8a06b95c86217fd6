"""Rate limiting per (client IP, path prefix) as docs/decisions.md#rate-limits says, counted by django-ratelimit.

The counters live in the shared cache (Redis in production), so the cap holds across any number
of web processes. Windows are fixed; django-ratelimit staggers their edges per key.
"""

from __future__ import annotations

import ipaddress
import logging
import math
import re
import threading
import time
from dataclasses import dataclass

from django.conf import settings
from django.core.cache import cache
from django.core.cache.backends.base import DEFAULT_TIMEOUT
from django.core.cache.backends.redis import RedisCache, RedisCacheClient
from django_ratelimit.core import get_usage

from core.http.ratelimit_rules import RULES, Rule
from core.models import RateLimitOverride

logger = logging.getLogger(__name__)

# Exact paths with a rule of their own (any method).
_EXACT = {
    "/api/v1/auth/register": "auth_register",
    "/api/v1/auth/password/reset": "auth_password_reset",
    "/api/v1/auth/password/reset/confirm": "auth_password_reset_confirm",
    "/api/v1/brief/generate": "brief_generate",
    "/api/v1/brief/suggestions": "brief_suggestions",
    "/api/v1/signature/tagline": "signature_tagline",
    "/api/v1/signature/scrape-website": "signature_scrape_website",
}
# Top-level prefixes with a rule of their own.
_PREFIX = {"/api/v1/tasks": "tasks", "/api/v1/webhooks": "webhooks"}

# Every POST that creates a task counts in the task-creation bucket, not only `POST /api/v1/tasks`:
# a remix is a create too (see docs/decisions.md#rate-limits).
_TASK_CREATES = re.compile(r"^/api/v1/tasks(?:/[^/]+/remix)?$")

_EXEMPT_EXACT = {"/health", "/docs", "/redoc", "/openapi.json"}
_EXEMPT_PREFIXES = ("/docs/", "/redoc/")


def classify(method: str, path: str) -> tuple[str, Rule] | None:
    """The (bucket, rule) a request counts against, or None when it is exempt."""
    if method == "OPTIONS" or path in _EXEMPT_EXACT or path.startswith((*_EXEMPT_PREFIXES, settings.STATIC_URL)):
        return None
    trimmed = path.rstrip("/") or "/"
    if method == "POST" and _TASK_CREATES.match(trimmed):
        return "POST /api/v1/tasks", RULES["tasks_create"]
    if trimmed in _EXACT:
        return trimmed, RULES[_EXACT[trimmed]]
    if path.startswith("/api/v1/"):
        first = path[len("/api/v1/") :].split("/", 1)[0]
        prefix = f"/api/v1/{first}"
    else:
        prefix = "/" + path.lstrip("/").split("/", 1)[0]
    return prefix, RULES[_PREFIX.get(prefix, "default")]


@dataclass(frozen=True)
class Usage:
    limit: int
    remaining: int
    reset: int  # Unix seconds: when the window ends and the count starts over
    limited: bool

    @property
    def retry_after(self) -> int:
        return max(1, math.ceil(self.reset - time.time()))

    def headers(self) -> dict[str, str]:
        return {
            "X-RateLimit-Limit": str(self.limit),
            "X-RateLimit-Remaining": str(self.remaining),
            "X-RateLimit-Reset": str(self.reset),
        }


def client_key(ip: str) -> str:
    """The counter key of a client address: an IPv6 client is its /64, since one host usually holds a
    whole /64 and would otherwise get a fresh bucket per address. IPv4 (also IPv4-mapped IPv6) as is."""
    try:
        address = ipaddress.ip_address(ip)
    except ValueError:
        return ip
    if isinstance(address, ipaddress.IPv6Address):
        if address.ipv4_mapped is not None:
            return str(address.ipv4_mapped)
        return str(ipaddress.IPv6Network((address, 64), strict=False))
    return str(address)


# Without its counters (Redis down) the limiter fails open: requests are served, without X-RateLimit-*
# headers, and each process logs one warning per UNAVAILABLE_LOG_INTERVAL seconds rather than one per
# request (docs/operations.md#when-a-dependency-goes-away).
UNAVAILABLE_LOG_INTERVAL = 60.0
_unavailable_lock = threading.Lock()
_unavailable_state = {"next_log": 0.0, "missed": 0}


def counters_unavailable(exc: BaseException | None) -> None:
    """Note a request that could not be counted; log it at most once per interval, with how many."""
    now = time.monotonic()
    with _unavailable_lock:
        _unavailable_state["missed"] += 1
        if now < _unavailable_state["next_log"]:
            return
        missed, _unavailable_state["missed"] = _unavailable_state["missed"], 0
        _unavailable_state["next_log"] = now + UNAVAILABLE_LOG_INTERVAL
    logger.warning(
        "rate limit counters unavailable (%s); failing open: %d request(s) served uncounted in this process "
        "since the last warning",
        f"{type(exc).__name__}: {exc}" if exc else "no counter",
        missed,
    )


def hit(request, bucket: str, rule: Rule, ip: str) -> Usage | None:
    """Count one request. Returns None when the counter store is unreachable (fail open)."""
    limit = override_limit(ip, rule.name) or rule.limit
    rate = f"{limit}/{rule.period}s"
    key = client_key(ip)
    try:
        usage = get_usage(request, group=bucket, key=lambda group, req: key, rate=rate, increment=True)
    except Exception as exc:  # the cache is down: serve rather than refuse everyone
        counters_unavailable(exc)
        return None
    # django-ratelimit reports a counter it could not read or write as count 0 with limit 0. A
    # time_left of -1 alone is not a failure: the window's last second can tick by during the call.
    if usage is None or (usage["count"] == 0 and usage["limit"] == 0):
        counters_unavailable(None)
        return None
    count = usage["count"]
    # The window django-ratelimit names `w` counts requests up to second `w` included: it ends at w + 1.
    # time_left is `w` less the whole second it read the clock in (negative once the window's last second
    # went by during the call), so this is w + 1 but for a second that ticks between its clock and this one.
    return Usage(
        limit=limit,
        remaining=max(0, limit - count),
        reset=int(time.time()) + usage["time_left"] + 1,
        limited=count > limit,
    )


_clients: dict[tuple, object] = {}
_clients_lock = threading.Lock()


class ProcessRedisCacheClient(RedisCacheClient):
    """Django's Redis cache client, with one `redis.Redis` (and so one connection pool) per server per
    process, shared by the threads of the process.

    Django's `get_client()` builds a new `redis.Redis` on every cache call, and `caches[...]` is per
    thread, so each thread also has its own pool: building the client was ~40 % of counting a request.
    A `redis.Redis` is thread-safe (a connection is taken from the pool per command) and its pool
    reconnects after a fork. Nothing in it is state another process needs (docs/decisions.md#running).
    """

    def get_client(self, key=None, *, write=False):
        index = self._get_connection_pool_index(write)
        ident = (
            self._servers[index],
            self._client,
            self._pool_class,
            tuple(sorted(map(repr, self._pool_options.items()))),
        )
        client = _clients.get(ident)
        if client is None:
            with _clients_lock:
                client = _clients.get(ident)
                if client is None:
                    pool = self._pool_class.from_url(self._servers[index], **self._pool_options)
                    client = _clients[ident] = self._client(connection_pool=pool)
        return client


class CounterRedisCache(RedisCache):
    """Django's RedisCache, with `incr` in one round trip instead of two, and one client per process
    (ProcessRedisCacheClient).

    Django's own `incr` asks EXISTS, then INCR. The script is atomic, and like Django's it raises
    ValueError for a key that does not exist (it must not create one without an expiry). The base of
    RateLimitCounterCache below.
    """

    def __init__(self, server, params):
        super().__init__(server, params)
        self._class = ProcessRedisCacheClient

    _INCR_IF_EXISTS = (
        "if redis.call('EXISTS', KEYS[1]) == 1 then return redis.call('INCRBY', KEYS[1], ARGV[1]) end return false"
    )

    def incr(self, key, delta=1, version=None):
        return self._incr_existing(self.make_and_validate_key(key, version=version), delta)

    def _incr_existing(self, key: str, delta: int) -> int:
        client = self._cache.get_client(key, write=True)
        value = client.eval(self._INCR_IF_EXISTS, 1, key, delta)
        if value is None:
            raise ValueError(f"Key {key!r} not found.")
        return value


class RateLimitCounterCache(CounterRedisCache):
    """The rate-limit counters (RATELIMIT_USE_CACHE): one round trip to Redis per counted request.

    django-ratelimit counts a request with `add(key, 1, timeout)` and, when the key already exists,
    `incr(key)`: two round trips. Here `add` is one atomic script that adds `value` to the counter and
    sets the expiry when the counter is new, returning whether it was; the count it reached is kept
    for the `incr(key)` django-ratelimit makes next on the same thread, which then needs no round trip.
    `add(key, 0)` (django-ratelimit's read-only `get_usage`) creates an absent counter at 0 and changes
    nothing else, as Django's `add` would. Only for counters: `add` of anything but an integer is refused.
    """

    # INCRBY, then give a counter that has no expiry yet (a new one) its expiry, in one atomic call.
    _ADD_COUNT = (
        "local n = redis.call('INCRBY', KEYS[1], ARGV[1]) "
        "if tonumber(ARGV[2]) > 0 and redis.call('TTL', KEYS[1]) == -1 then "
        "redis.call('EXPIRE', KEYS[1], ARGV[2]) end "
        "return n"
    )

    def __init__(self, server, params):
        super().__init__(server, params)
        self._counted = threading.local()

    def add(self, key, value, timeout=DEFAULT_TIMEOUT, version=None):
        if not isinstance(value, int) or isinstance(value, bool):
            raise TypeError("RateLimitCounterCache holds integer counters only.")
        key = self.make_and_validate_key(key, version=version)
        seconds = self.get_backend_timeout(timeout) or 0  # None (no expiry) and 0 alike: no expiry set here
        client = self._cache.get_client(key, write=True)
        count = client.eval(self._ADD_COUNT, 1, key, value, seconds)
        # "Added" when the counter now holds exactly `value`: django-ratelimit then takes `value` as
        # the count, which is the truth. Otherwise it asks `incr`, answered from here.
        added = count == value
        self._counted.last = (key, value, count) if value and not added else None
        return added

    def incr(self, key, delta=1, version=None):
        key = self.make_and_validate_key(key, version=version)
        last = getattr(self._counted, "last", None)
        self._counted.last = None
        if last is not None and last[0] == key and last[1] == delta:
            return last[2]  # `add` counted this request already
        return self._incr_existing(key, delta)


# --- Overrides staff record in the admin ------------------------------------------------------------

OVERRIDES_CACHE_KEY = "ratelimit:overrides"
OVERRIDES_TTL = 300
_Overrides = list[tuple[ipaddress.IPv4Network | ipaddress.IPv6Network, str, int]]
# Parsed overrides kept in this process for RATELIMIT_OVERRIDES_LOCAL_SECONDS (0: ask the shared cache on
# every request). A change made in the admin reaches the other processes within that many seconds.
_local: tuple[float, _Overrides] | None = None


def _overrides() -> _Overrides:
    global _local
    local_seconds = getattr(settings, "RATELIMIT_OVERRIDES_LOCAL_SECONDS", 0)
    if local_seconds and _local is not None and time.monotonic() < _local[0]:
        return _local[1]
    try:
        rows = cache.get(OVERRIDES_CACHE_KEY)
    except Exception:  # the cache is down (hit() logs that): the last overrides this process knew, else the table
        if _local is not None:
            return _local[1]
        rows, cache_up = None, False
    else:
        cache_up = True
    if rows is None:
        rows = list(RateLimitOverride.objects.values_list("network", "rule", "limit"))
        if cache_up:
            cache.set(OVERRIDES_CACHE_KEY, rows, OVERRIDES_TTL)
    parsed = [(ipaddress.ip_network(net, strict=False), rule, limit) for net, rule, limit in rows]
    if local_seconds:
        _local = (time.monotonic() + local_seconds, parsed)
    return parsed


def override_limit(ip: str, rule_name: str) -> int | None:
    try:
        address = ipaddress.ip_address(ip)
    except ValueError:
        return None
    best = None
    for network, rule, limit in _overrides():
        if rule in (rule_name, "*") and address.version == network.version and address in network:
            # The most specific network wins; a rule-specific row beats "*" on the same network.
            rank = (network.prefixlen, rule != "*")
            if best is None or rank > best[0]:
                best = (rank, limit)
    return best[1] if best else None


def forget_overrides() -> None:
    global _local
    _local = None
    cache.delete(OVERRIDES_CACHE_KEY)
