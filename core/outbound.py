"""Outbound HTTP to addresses users give us (webhooks, agent endpoints, pages to scrape).

Such URLs must not reach our own network: a URL whose host resolves to a private, loopback,
link-local, multicast or otherwise non-public address is refused, unless
OUTBOUND_ALLOW_PRIVATE_URLS is on (local development and tests). Redirects are followed by hand
so that every hop is checked again. Every call has a timeout and a size cap.
"""

from __future__ import annotations

import ipaddress
import socket
from dataclasses import dataclass
from urllib.parse import urljoin, urlsplit

import httpx
from django.conf import settings

USER_AGENT = "BrandMarket/0.1 (+https://localhost/docs)"
DEFAULT_TIMEOUT = httpx.Timeout(15.0, connect=5.0)


class UnsafeURL(ValueError):
    """The URL may not be fetched: bad scheme, no host, or a host that is not public."""


def _is_public(address: ipaddress.IPv4Address | ipaddress.IPv6Address) -> bool:
    if isinstance(address, ipaddress.IPv6Address) and address.ipv4_mapped:
        address = address.ipv4_mapped
    return address.is_global and not address.is_multicast


def check_url(url: str, *, schemes: tuple[str, ...] = ("https",), allow_private: bool | None = None) -> str:
    """Return the URL if it may be called; raise UnsafeURL saying why not.

    With private addresses allowed, plain `http` is accepted too (CONTRACT §10).
    """
    if allow_private is None:
        allow_private = settings.OUTBOUND_ALLOW_PRIVATE_URLS
    try:
        parts = urlsplit(url)
        port = parts.port
    except ValueError as exc:
        raise UnsafeURL("The URL is malformed.") from exc
    allowed = set(schemes) | ({"http", "https"} if allow_private else set())
    if parts.scheme not in allowed:
        raise UnsafeURL(f"The URL scheme must be {' or '.join(sorted(allowed))}.")
    if not parts.hostname:
        raise UnsafeURL("The URL has no host.")
    if parts.username or parts.password:
        raise UnsafeURL("The URL must not carry credentials.")
    if allow_private:
        return url
    try:
        infos = socket.getaddrinfo(
            parts.hostname, port or (443 if parts.scheme == "https" else 80), type=socket.SOCK_STREAM
        )
    except (socket.gaierror, UnicodeError) as exc:
        raise UnsafeURL(f"The host {parts.hostname!r} does not resolve.") from exc
    for info in infos:
        address = ipaddress.ip_address(info[4][0].split("%", 1)[0])
        if not _is_public(address):
            raise UnsafeURL(f"The host {parts.hostname!r} resolves to a non-public address.")
    return url


@dataclass(frozen=True)
class FetchResult:
    url: str  # after redirects
    status_code: int
    headers: httpx.Headers
    content: bytes
    truncated: bool

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


def fetch(
    url: str,
    *,
    schemes: tuple[str, ...] = ("http", "https"),
    max_bytes: int = 2 * 1024 * 1024,
    max_redirects: int = 5,
    timeout: httpx.Timeout | float = DEFAULT_TIMEOUT,
    client: httpx.Client | None = None,
) -> FetchResult:
    """GET a user-given URL safely. Raises UnsafeURL, or httpx.HTTPError on network failure."""
    own_client = client is None
    client = client or httpx.Client(timeout=timeout, headers={"User-Agent": USER_AGENT}, follow_redirects=False)
    try:
        current = url
        for _ in range(max_redirects + 1):
            check_url(current, schemes=schemes)
            with client.stream("GET", current) as response:
                if response.is_redirect and "location" in response.headers:
                    current = urljoin(current, response.headers["location"])
                    continue
                chunks, size, truncated = [], 0, False
                for chunk in response.iter_bytes():
                    chunks.append(chunk)
                    size += len(chunk)
                    if size > max_bytes:
                        truncated = True
                        break
                content = b"".join(chunks)[:max_bytes]
                return FetchResult(current, response.status_code, response.headers, content, truncated)
        raise UnsafeURL(f"Too many redirects (more than {max_redirects}).")
    finally:
        if own_client:
            client.close()
