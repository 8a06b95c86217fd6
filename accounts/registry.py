"""What other apps keep for an account, registered here so `accounts` imports none of them
(docs/architecture.md#account-extensions).

Credits are `assistant`'s: it sells them, spends them and keeps their ledger and balance. `accounts`
decides when an account's starting credits are due (created verified, or verified later) and shows the
balance on `/auth/me`; it reaches both through the keeper `assistant` registers from its
AssistantConfig.ready(), as the domain apps register their payment handlers with `payments.registry`.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from django.core.exceptions import ImproperlyConfigured


@dataclass(frozen=True)
class CreditsKeeper:
    # grant(user=, amount=None): the starting credits, written to the ledger in the caller's transaction;
    # None means SIGNUP_CREDITS.
    grant: Callable[..., Any]
    # balance(user=) -> int: the account's balance now (0 before its first credit).
    balance: Callable[..., int]


_keeper: CreditsKeeper | None = None


def credits_keeper_register(keeper: CreditsKeeper) -> None:
    global _keeper
    _keeper = keeper


def credits_keeper() -> CreditsKeeper:
    if _keeper is None:
        raise ImproperlyConfigured("No app keeps account credits: `assistant` registers its keeper from ready().")
    return _keeper
