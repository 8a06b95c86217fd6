"""Who is really calling: the socket peer, or the client behind a trusted proxy."""

from __future__ import annotations

import ipaddress
from functools import lru_cache

from django.conf import settings


@lru_cache(maxsize=4096)
def _parse(address: str):
    try:
        return ipaddress.ip_address(address.strip().strip("[]"))
    except ValueError:
        return None


def is_trusted(address: str) -> bool:
    ip = _parse(address)
    return ip is not None and any(ip in network for network in settings.TRUSTED_PROXIES)


def client_ip(peer: str, forwarded_for: str | None) -> str:
    """The right-most `X-Forwarded-For` address that is not a trusted proxy, when the peer is one."""
    if not forwarded_for or not is_trusted(peer):
        return peer
    hops = [hop.strip() for hop in forwarded_for.split(",") if hop.strip()]
    for hop in reversed(hops):
        if _parse(hop) is None:
            return peer  # garbage in the header: trust nothing in it
        if not is_trusted(hop):
            return hop
    return hops[0] if hops else peer
