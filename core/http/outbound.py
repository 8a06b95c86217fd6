"""The one outbound HTTP client for addresses users give us (webhooks, agent endpoints, pages to scrape).

Such URLs must not reach our own network. Every call:

- resolves the host once (the resolver is injectable: `OUTBOUND_RESOLVER` in settings, a callable
  host -> list of IP strings or its dotted path; default `socket.getaddrinfo`) and refuses any
  address that is not global: private, loopback, link-local, multicast, reserved. An IPv6 form that
  carries an IPv4 address is judged by that IPv4 address (mapped `::ffff:0:0/96`, SIIT's translated
  `::ffff:0:0:0/96`, compatible `::/96`, NAT64 `64:ff9b::/96`, 6to4 `2002::/16`, Teredo `2001::/32`
  with both its server and client); the local-use NAT64 prefix `64:ff9b:1::/48`, where the IPv4
  sits at a place its operator chooses, is refused outright
  (see docs/decisions.md#outbound-webhooks-and-agent-dispatch);
- **connects to the addresses it checked**: the connection pool's network backend dials only those
  addresses, while the URL keeps its host name, so `Host`, TLS SNI and the certificate check use the
  name (a DNS answer that changes between check and connect cannot redirect the call);
- follows redirects by hand (GET only, a hop limit), resolving and checking every hop again;
- has a total deadline across all hops as well as connect/read timeouts: every socket operation is
  given at most the time left, so a server dripping a byte at a time is cut off at the deadline;
- caps the response size;
- fails with OutboundError (UnsafeURL when the URL itself is refused) whose text says what failed
  ("connection refused", "timed out after 15 s", "address not allowed") and never echoes a response
  body, an exception message from the network stack or an address.

OUTBOUND_ALLOW_PRIVATE_URLS (local development and tests) lets loopback and private addresses (and
plain http) through; the call is still pinned to the resolved addresses. Narrower, OUTBOUND_ALLOWED_ORIGINS
lets exactly the listed origins through (the local profile's own server, for its demo agent and webhook
inbox), their certificate checked against OUTBOUND_ALLOWED_ORIGINS_CA too (docs/guide.md#the-local-demo).
"""

from __future__ import annotations

import contextvars
import functools
import ipaddress
import os
import socket
import ssl
import time
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from urllib.parse import urljoin, urlsplit

import httpcore
import httpx
from django.conf import settings
from django.utils.module_loading import import_string

from core.http.fairness import released

USER_AGENT = "BrandMarket/0.1 (+https://localhost/docs)"
CONNECT_TIMEOUT = 5.0
DEFAULT_MAX_BYTES = 2 * 1024 * 1024
REDIRECT_STATUSES = {301, 302, 303, 307, 308}

Resolver = Callable[[str], Iterable[str]]
IPAddress = ipaddress.IPv4Address | ipaddress.IPv6Address

_NAT64_LOCAL = ipaddress.ip_network("64:ff9b:1::/48")
# The IPv6 ranges whose last 32 bits are an IPv4 address. Python's `is_global` does not look inside
# them all (SIIT's `::ffff:0:0:0/96` counts as global), so each is judged by the address it carries.
_IPV4_IN_LOW_BITS = (
    ipaddress.ip_network("::ffff:0:0/96"),  # IPv4-mapped
    ipaddress.ip_network("::ffff:0:0:0/96"),  # SIIT IPv4-translated
    ipaddress.ip_network("64:ff9b::/96"),  # NAT64, the well-known prefix
    ipaddress.ip_network("::/96"),  # IPv4-compatible (deprecated; `::` and `::1` too, both not global)
)


class OutboundError(Exception):
    """An outbound call failed. `str(error)` is a short reason that is safe to store and show."""


class UnsafeURL(OutboundError, ValueError):
    """The URL may not be fetched: bad scheme, no host, or a host that is not public."""


# --- Which addresses may be called ---------------------------------------------------------------


def _embedded_ipv4(address: ipaddress.IPv6Address) -> list[ipaddress.IPv4Address]:
    """The IPv4 addresses an IPv6 transition form carries (empty for a plain IPv6 address)."""
    if any(address in network for network in _IPV4_IN_LOW_BITS):
        return [ipaddress.IPv4Address(int(address) & 0xFFFFFFFF)]
    if address.sixtofour:
        return [address.sixtofour]
    if address.teredo:
        return list(address.teredo)
    return []


def address_allowed(address: IPAddress | str) -> bool:
    """Whether a public client may be told to call this address (global, not multicast, nothing
    non-global inside a transition form)."""
    if isinstance(address, str):
        address = ipaddress.ip_address(address.split("%", 1)[0])
    if isinstance(address, ipaddress.IPv6Address):
        if address in _NAT64_LOCAL:
            return False
        embedded = _embedded_ipv4(address)
        if embedded:
            return all(address_allowed(inner) for inner in embedded)
    return address.is_global and not address.is_multicast


def system_resolver(host: str) -> list[str]:
    """The host's addresses from the system resolver, in its order, without duplicates."""
    infos = socket.getaddrinfo(host, None, type=socket.SOCK_STREAM)
    return list(dict.fromkeys(info[4][0].split("%", 1)[0] for info in infos))


def _resolver() -> Resolver:
    configured = getattr(settings, "OUTBOUND_RESOLVER", None)
    if configured is None:
        return system_resolver
    return import_string(configured) if isinstance(configured, str) else configured


@dataclass(frozen=True)
class Target:
    url: str
    host: str  # as the connection pool sees it (IDNA-encoded name, or an IP literal without brackets)
    addresses: tuple[str, ...]  # checked; the only addresses the call may connect to


def _parse(url: str, schemes: Iterable[str], allow_private: bool) -> httpx.URL:
    try:
        urlsplit(url).port  # noqa: B018 - raises ValueError on a bad port
        parsed = httpx.URL(url)
    except (ValueError, httpx.InvalidURL, UnicodeError) as exc:
        raise UnsafeURL("The URL is malformed.") from exc
    allowed = set(schemes) | ({"http", "https"} if allow_private else set())
    if parsed.scheme not in allowed:
        raise UnsafeURL(f"The URL scheme must be {' or '.join(sorted(allowed))}.")
    if not parsed.raw_host:
        raise UnsafeURL("The URL has no host.")
    if parsed.userinfo:
        raise UnsafeURL("The URL must not carry credentials.")
    return parsed


def _origin(scheme: str, host: str, port: int | None) -> str:
    return f"{scheme}://{host.lower().strip('[]')}:{port or {'https': 443, 'http': 80}.get(scheme, 0)}"


def origin_allowed(url: str) -> bool:
    """Whether the URL is at one of OUTBOUND_ALLOWED_ORIGINS (same scheme, host and port)."""
    allowed = getattr(settings, "OUTBOUND_ALLOWED_ORIGINS", None)
    if not allowed:
        return False
    try:
        parts = urlsplit(url)
        origin = _origin(parts.scheme, parts.hostname or "", parts.port)
        listed = set()
        for entry in allowed:
            entry_parts = urlsplit(entry)
            listed.add(_origin(entry_parts.scheme, entry_parts.hostname or "", entry_parts.port))
    except ValueError:
        return False
    return bool(parts.hostname) and origin in listed


def resolve_url(
    url: str,
    *,
    schemes: Iterable[str] = ("https",),
    allow_private: bool | None = None,
    resolver: Resolver | None = None,
) -> Target:
    """Check the URL, resolve its host once and check every address; raise UnsafeURL saying why not."""
    if allow_private is None:
        allow_private = settings.OUTBOUND_ALLOW_PRIVATE_URLS or origin_allowed(url)
    parsed = _parse(url, schemes, allow_private)
    host = parsed.raw_host.decode("ascii")
    try:
        addresses = (str(ipaddress.ip_address(host)),)
    except ValueError:
        try:
            answer = (resolver or _resolver())(host)
            addresses = tuple(dict.fromkeys(str(ipaddress.ip_address(a.split("%", 1)[0])) for a in answer))
        except (OSError, UnicodeError, ValueError) as exc:
            raise UnsafeURL(f"The host {host!r} does not resolve.") from exc
    if not addresses:
        raise UnsafeURL(f"The host {host!r} does not resolve.")
    if not allow_private and not all(address_allowed(a) for a in addresses):
        raise UnsafeURL(f"The host {host!r} resolves to a non-public address.")
    return Target(url=url, host=host, addresses=addresses)


def check_url(url: str, *, schemes: tuple[str, ...] = ("https",), allow_private: bool | None = None) -> str:
    """Return the URL if it may be called now; raise UnsafeURL saying why not (validation of input).

    With private addresses allowed, plain `http` is accepted too
    (docs/decisions.md#outbound-webhooks-and-agent-dispatch) and the host is not
    looked up. Every call resolves and checks again (`request`): DNS can change.
    """
    if allow_private is None:
        allow_private = settings.OUTBOUND_ALLOW_PRIVATE_URLS or origin_allowed(url)
    if allow_private:
        _parse(url, schemes, allow_private)
        return url
    resolve_url(url, schemes=schemes, allow_private=False)
    return url


# --- Connecting only to the checked addresses, within the deadline --------------------------------


class _Deadline:
    def __init__(self, seconds: float):
        self.seconds = seconds
        self.end = time.monotonic() + seconds

    def remaining(self) -> float:
        return self.end - time.monotonic()

    def clamp(self, timeout: float | None, error: type[Exception]) -> float:
        left = self.remaining()
        if left <= 0:
            raise error("deadline")
        return left if timeout is None else min(timeout, left)


class _DeadlineStream(httpcore.NetworkStream):
    """A socket stream whose every operation gets at most the time left before the deadline."""

    def __init__(self, inner: httpcore.NetworkStream, deadline: _Deadline | _RequestDeadline):
        self._inner, self._deadline = inner, deadline

    def read(self, max_bytes: int, timeout: float | None = None) -> bytes:
        return self._inner.read(max_bytes, self._deadline.clamp(timeout, httpcore.ReadTimeout))

    def write(self, buffer: bytes, timeout: float | None = None) -> None:
        self._inner.write(buffer, self._deadline.clamp(timeout, httpcore.WriteTimeout))

    def close(self) -> None:
        self._inner.close()

    def start_tls(self, ssl_context, server_hostname=None, timeout=None) -> httpcore.NetworkStream:
        timeout = self._deadline.clamp(timeout, httpcore.ConnectTimeout)
        return _DeadlineStream(self._inner.start_tls(ssl_context, server_hostname, timeout), self._deadline)

    def get_extra_info(self, info: str):
        return self._inner.get_extra_info(info)


class _PinnedBackend(httpcore.NetworkBackend):
    """Dials a host only at the addresses checked for it (`pins`), never by resolving its name."""

    def __init__(self, deadline: _Deadline):
        self.pins: dict[str, tuple[str, ...]] = {}
        self._deadline = deadline
        self._inner = httpcore.SyncBackend()

    def connect_tcp(self, host, port, timeout=None, local_address=None, socket_options=None):
        addresses = self.pins.get(host)
        if not addresses:
            raise httpcore.ConnectError("address not allowed")
        error: Exception | None = None
        for address in addresses:  # in the resolver's order, like the system's own connect
            try:
                stream = self._inner.connect_tcp(
                    address,
                    port,
                    timeout=self._deadline.clamp(timeout, httpcore.ConnectTimeout),
                    local_address=local_address,
                    socket_options=socket_options,
                )
            except httpcore.ConnectError as exc:
                error = exc
                continue
            return _DeadlineStream(stream, self._deadline)
        raise error or httpcore.ConnectError("could not connect")

    def connect_unix_socket(self, path, timeout=None, socket_options=None):
        raise httpcore.ConnectError("address not allowed")

    def sleep(self, seconds: float) -> None:
        time.sleep(seconds)


class _PinnedTransport(httpx.HTTPTransport):
    """httpx's own transport (request and exception mapping, streaming) over a connection pool whose
    network backend is `_PinnedBackend`. httpx 0.28 keeps the pool in `_pool`; the security tests
    (tests/security/test_outbound_ssrf.py) fail if an upgrade changes that."""

    def __init__(self, backend: _PinnedBackend, extra_ca: str = ""):  # not super().__init__: a pool to throw away
        self._pool = httpcore.ConnectionPool(
            ssl_context=_ssl_context(extra_ca), max_connections=4, keepalive_expiry=5.0, network_backend=backend
        )

    def handle_request(self, request: httpx.Request) -> httpx.Response:
        with released():  # a web request's turn goes to the next one while this waits (core.http.fairness)
            return super().handle_request(request)


# --- Provider APIs: ordinary connections, with the same total deadline ------------------------------

_REQUEST_END: contextvars.ContextVar[float | None] = contextvars.ContextVar("outbound_request_end", default=None)


class _RequestDeadline:
    """The deadline of the request this thread (context) is making through a DeadlineTransport."""

    def clamp(self, timeout: float | None, error: type[Exception]) -> float | None:
        end = _REQUEST_END.get()
        if end is None:
            return timeout
        left = end - time.monotonic()
        if left <= 0:
            raise error("deadline")
        return left if timeout is None else min(timeout, left)


class _ClockedBackend(httpcore.NetworkBackend):
    """The system's network backend (its own name resolution) with every socket operation given at
    most the time left before the current request's deadline."""

    def __init__(self):
        self._inner = httpcore.SyncBackend()
        self._clock = _RequestDeadline()

    def connect_tcp(self, host, port, timeout=None, local_address=None, socket_options=None):
        timeout = self._clock.clamp(timeout, httpcore.ConnectTimeout)
        stream = self._inner.connect_tcp(
            host, port, timeout=timeout, local_address=local_address, socket_options=socket_options
        )
        return _DeadlineStream(stream, self._clock)

    def connect_unix_socket(self, path, timeout=None, socket_options=None):
        timeout = self._clock.clamp(timeout, httpcore.ConnectTimeout)
        return _DeadlineStream(self._inner.connect_unix_socket(path, timeout, socket_options), self._clock)

    def sleep(self, seconds: float) -> None:
        time.sleep(seconds)


class DeadlineTransport(httpx.HTTPTransport):
    """httpx's transport for provider APIs (Stripe, the OpenAI-compatible API, Bright Data, our own
    local webhook): addresses operators configure, so no address check, but the same total deadline
    as `request()`: from the moment a request is sent until its body is read, every connect, TLS
    handshake, write and read gets at most the time left (httpx's own timeouts are per operation, so
    a provider dripping a byte at a time would otherwise hold the worker or web thread for as long
    as it likes). Past the deadline the call fails with httpx.TimeoutException, which the adapters
    already turn into ProviderUnavailable. Keyword arguments are httpx.HTTPTransport's (verify, ...).
    """

    def __init__(self, deadline: float, **kwargs):
        super().__init__(**kwargs)
        self.deadline = deadline
        # httpx 0.28 builds the pool in `_pool` and httpcore keeps its backend in `_network_backend`;
        # tests/core/test_provider_deadline.py fails if an upgrade moves either.
        self._pool._network_backend = _ClockedBackend()

    def handle_request(self, request: httpx.Request) -> httpx.Response:
        # Set, not reset afterwards: the body is read after this returns, in the same context; the
        # next request through any DeadlineTransport in this context sets its own.
        _REQUEST_END.set(time.monotonic() + self.deadline)
        with released():  # a web request's turn goes to the next one while this waits (core.http.fairness)
            return super().handle_request(request)


@functools.cache
def _ssl_context(extra_ca: str = "") -> ssl.SSLContext:
    """Certificate checks against the system/certifi bundle (plus `extra_ca`, a PEM file), loaded once."""
    context = httpx.create_ssl_context(trust_env=False)
    if extra_ca:
        context.load_verify_locations(cafile=extra_ca)
    return context


def _extra_ca(url: str) -> str:
    """The local server's own certificate, trusted for calls to an allowed origin only (when it exists)."""
    path = getattr(settings, "OUTBOUND_ALLOWED_ORIGINS_CA", "")
    if path and origin_allowed(url) and os.path.isfile(path):
        return path
    return ""


# --- The client ----------------------------------------------------------------------------------


@dataclass(frozen=True)
class FetchResult:
    url: str  # after redirects
    status_code: int
    headers: httpx.Headers
    content: bytes
    truncated: bool
    duration_ms: int = 0

    @property
    def text(self) -> str:
        charset = "utf-8"
        content_type = self.headers.get("content-type", "")
        if "charset=" in content_type:
            charset = content_type.split("charset=", 1)[1].split(";", 1)[0].strip() or "utf-8"
        try:
            return self.content.decode(charset, errors="replace")
        except LookupError:
            return self.content.decode("utf-8", errors="replace")


def _causes(exc: BaseException) -> Iterable[BaseException]:
    seen: set[int] = set()
    current: BaseException | None = exc
    while current is not None and id(current) not in seen:
        seen.add(id(current))
        yield current
        current = current.__cause__ or current.__context__


def _reason(exc: httpx.HTTPError, deadline: _Deadline) -> str:
    """What failed, in words that carry no address, port or response text."""
    if isinstance(exc, httpx.TimeoutException):
        if deadline.remaining() <= 0.05:
            return f"timed out after {deadline.seconds:g} s"
        return "connection timed out" if isinstance(exc, httpx.ConnectTimeout) else "timed out waiting for the answer"
    if isinstance(exc, httpx.ConnectError):
        for cause in _causes(exc):
            if isinstance(cause, ConnectionRefusedError):
                return "connection refused"
            if isinstance(cause, ssl.SSLCertVerificationError):
                return "TLS certificate not valid for the host"
            if isinstance(cause, ssl.SSLError):
                return "TLS handshake failed"
            if isinstance(cause, httpcore.ConnectError) and str(cause) == "address not allowed":
                return "address not allowed"
        return "could not connect"
    if isinstance(exc, httpx.RemoteProtocolError):
        return "invalid HTTP answer"
    if isinstance(exc, httpx.ReadError | httpx.WriteError):
        return "connection closed before the answer was complete"
    if isinstance(exc, httpx.DecodingError):
        return "the answer could not be decoded"
    return "request failed"


def request(
    method: str,
    url: str,
    *,
    deadline: float,
    content: bytes | None = None,
    headers: dict[str, str] | None = None,
    schemes: tuple[str, ...] = ("https",),
    max_bytes: int = DEFAULT_MAX_BYTES,
    max_redirects: int = 0,
    read_timeout: float | None = None,
    allow_private: bool | None = None,
    resolver: Resolver | None = None,
) -> FetchResult:
    """Make one call to a user-given URL (see the module docstring). Redirects are followed for GET
    and HEAD only, up to `max_redirects` hops; otherwise a redirect is returned as the answer.
    The body is read up to `max_bytes` (`truncated` says whether there was more).

    Raises UnsafeURL when a URL (or a redirect's target) is refused, OutboundError when the call fails.
    """
    clock = _Deadline(deadline)
    backend = _PinnedBackend(clock)
    per_phase = min(read_timeout or deadline, deadline)
    timeout = httpx.Timeout(per_phase, connect=min(CONNECT_TIMEOUT, deadline))
    all_headers = {"user-agent": USER_AGENT, **(headers or {})}
    started = time.monotonic()
    current = url
    try:
        with httpx.Client(
            transport=_PinnedTransport(backend, _extra_ca(url)),
            timeout=timeout,
            follow_redirects=False,
            trust_env=False,
        ) as client:
            for _ in range(max_redirects + 1):
                target = resolve_url(current, schemes=schemes, allow_private=allow_private, resolver=resolver)
                backend.pins[target.host] = target.addresses
                with client.stream(method, current, content=content, headers=all_headers) as response:
                    location = response.headers.get("location")
                    if (
                        max_redirects
                        and method in ("GET", "HEAD")
                        and response.status_code in REDIRECT_STATUSES
                        and location
                    ):
                        current = urljoin(current, location)
                        continue
                    chunks, size, truncated = [], 0, False
                    for chunk in response.iter_bytes():
                        chunks.append(chunk)
                        size += len(chunk)
                        if size > max_bytes:
                            truncated = True
                            break
                        if clock.remaining() <= 0:
                            raise httpx.ReadTimeout("deadline")
                    body = b"".join(chunks)[:max_bytes]
                    duration = int((time.monotonic() - started) * 1000)
                    return FetchResult(current, response.status_code, response.headers, body, truncated, duration)
    except httpx.HTTPError as exc:
        raise OutboundError(_reason(exc, clock)) from exc
    raise UnsafeURL(f"Too many redirects (more than {max_redirects}).")


def fetch(
    url: str,
    *,
    schemes: tuple[str, ...] = ("http", "https"),
    max_bytes: int = DEFAULT_MAX_BYTES,
    max_redirects: int = 5,
    deadline: float | None = None,
    resolver: Resolver | None = None,
) -> FetchResult:
    """GET a user-given page (redirects followed, each checked). The deadline defaults to
    OUTBOUND_PAGE_DEADLINE_SECONDS. Raises UnsafeURL or OutboundError."""
    return request(
        "GET",
        url,
        schemes=schemes,
        max_bytes=max_bytes,
        max_redirects=max_redirects,
        deadline=deadline if deadline is not None else settings.OUTBOUND_PAGE_DEADLINE_SECONDS,
        resolver=resolver,
    )
