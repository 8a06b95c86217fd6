"""Reading the environment: django-environ with strict helpers, so a malformed value fails at start-up
instead of surfacing later as odd behaviour. The other settings modules read through these."""

from __future__ import annotations

import ipaddress
from collections.abc import Callable
from pathlib import Path
from typing import Any, TypeVar

import environ
from django.core.exceptions import ImproperlyConfigured

BASE_DIR = Path(__file__).resolve().parent.parent.parent
env = environ.Env()

# Everything `make run` writes (database, broker, certificate, media, mail, generated secrets) lives here.
# VAR_DIR moves it, e.g. for a second server from the same tree (the outside-in tests do that).
VAR_DIR = Path(env.str("VAR_DIR", default=str(BASE_DIR / "var"))).resolve()


def env_networks(name: str) -> list[ipaddress.IPv4Network | ipaddress.IPv6Network]:
    """Parse a comma-separated list of CIDRs, failing loudly on a typo."""
    networks = []
    for raw in env.list(name, default=[]):
        try:
            networks.append(ipaddress.ip_network(raw.strip(), strict=False))
        except ValueError as exc:
            raise ImproperlyConfigured(f"{name}: {raw!r} is not an IP network") from exc
    return networks


def env_choice(name: str, choices: tuple[str, ...], default: str) -> str:
    value = env.str(name, default=default)
    if value not in choices:
        raise ImproperlyConfigured(f"{name} must be one of {', '.join(choices)}; got {value!r}")
    return value


def env_records(name: str, fields: tuple[tuple[str, Callable[[str], Any]], ...], default: str) -> list[dict]:
    """Parse comma-separated records of colon-separated values, e.g. `small:20:5.00:usd`, into one dict per
    record keyed by `fields` (name, type), failing loudly on a malformed one. What the values may be is the
    owning app's rule, checked when it starts (e.g. AssistantConfig.ready() for CREDIT_PACKS)."""
    records = []
    for item in filter(None, (part.strip() for part in env.str(name, default=default).split(","))):
        values = [part.strip() for part in item.split(":")]
        try:
            if len(values) != len(fields):
                raise ValueError(item)
            records.append({key: cast(value) for (key, cast), value in zip(fields, values, strict=True)})
        except (ValueError, ArithmeticError) as exc:
            raise ImproperlyConfigured(f"{name}: {item!r} is not {':'.join(key for key, _ in fields)}") from exc
    return records


_Number = TypeVar("_Number", int, float)


def env_renamed(new: str, old: str, cast: type[_Number], default: _Number) -> _Number:
    """A variable renamed to carry its unit: `new`, else `old`, its previous name, which keeps working for one
    release (docs/operations.md#renamed-settings). The new name wins when both are set."""
    name = old if old in env.ENVIRON and new not in env.ENVIRON else new
    return env.get_value(name, cast=cast, default=default)


# The shared Redis (cache, rate-limit counters, broker) when set; `make run` needs none.
REDIS_URL = env.str("REDIS_URL", default="")
# A Redis that is down or unreachable must cost a request milliseconds, not the operating system's TCP
# timeouts: connecting and each call are bounded (docs/operations.md#when-a-dependency-goes-away).
REDIS_SOCKET_TIMEOUTS = {"socket_connect_timeout": 1, "socket_timeout": 2}
