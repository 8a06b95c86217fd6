"""What an account sends data to, for its owner to review after a password reset.

Whoever held the account before the reset may have left a webhook subscription or an agent endpoint
behind that keeps receiving its events and tasks; the reset ends their sessions and API keys, not those
URLs. `accounts` imports no domain app, so each app that sends an owner's data to a URL the owner chose
registers a source from its AppConfig.ready() (as payments.registry does for payment events):

    review_source_register("webhook_subscription", subscription_urls_of)

A source takes the owner and returns `(id, url)` pairs. The notice mailed after a reset and
`GET /api/v1/auth/me` (`review_after_recovery`) list them (see docs/decisions.md#identity-and-authentication).
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from dataclasses import dataclass
from typing import Any

ReviewSource = Callable[[Any], Iterable[tuple[Any, str]]]


@dataclass(frozen=True)
class ReviewItem:
    kind: str  # "webhook_subscription", "agent_endpoint"
    id: str
    url: str


_sources: dict[str, ReviewSource] = {}


def review_source_register(kind: str, source: ReviewSource) -> ReviewSource:
    """Add (or replace) the source of one kind of item."""
    _sources[kind] = source
    return source


def review_items_of(owner) -> list[ReviewItem]:
    """Every registered kind's items of `owner`, kind by kind in registration order."""
    return [
        ReviewItem(kind=kind, id=str(item_id), url=url)
        for kind, source in _sources.items()
        for item_id, url in source(owner)
    ]
