"""The merged competitors roster, kept per brand in the cache as ready JSON bytes
(docs/decisions.md#domain-rules, "Cache").

A roster is cached under two generations: the brand's own (its competitors, overrides, kits,
tracked groups and the brand row) and a shared one (competitor seeds and advertisers, which many
brands read). Every write bumps the generation it touches at once (for readers in its own transaction) and again
once its transaction commits (`transaction.on_commit`), so a reader never finds a roster older than
the last committed write:

- the reader takes the generations *before* it reads the database, so a roster built from rows a
  concurrent transaction was about to change is stored under the old generation, which nobody asks
  for once that transaction has committed and bumped it;
- a generation is a random token, not a counter: a lost or evicted token only makes the next read
  rebuild;
- a brand has one slot per list (active, removed) holding (generations, bytes): a write does not
  leave the old body behind under an old key, so the cache holds at most one roster per brand and list.

Who bumps: ORM saves and deletes of Brand, BrandKit, BrandCompetitor, TrackedGroup, CompetitorSeed
and Advertiser deletes (brands.signals, so the admin and cascades are covered too), and the
services' bulk writes that send no signals (`bulk_create`, `QuerySet.update`) call
`roster_changed` / `shared_competitors_changed` themselves. Active and removed rosters
(`?removed=true`) are cached alike. A gzip copy is made once per generation for clients that
accept it (the roster holds no secrets, so compressing it gives BREACH nothing to find).
"""

from __future__ import annotations

import uuid
from dataclasses import dataclass
from uuid import UUID

from django.conf import settings
from django.core.cache import cache
from django.db import transaction
from django.utils.text import compress_string

SHARED_GENERATION = "roster:gen:shared"
# The rows' shape: a release that adds a field (v2: `origin`) reads and writes other slots than the release
# before, so during a rolling deploy neither serves the other's rows.
ROW_SHAPE = "v2"


def _brand_generation(brand_id: UUID) -> str:
    return f"roster:gen:{brand_id}"


def _bump(key: str) -> None:
    cache.set(key, uuid.uuid4().hex, None)


def _stale(key: str) -> None:
    """Bump now, for readers inside this transaction (they see its writes), and again once it
    commits, for everyone else: a roster another connection built from the old rows meanwhile was
    stored under the generation this second bump retires."""
    _bump(key)
    transaction.on_commit(lambda: _bump(key))


def roster_changed(brand_id: UUID) -> None:
    """The brand's roster may have changed: its cached copies are stale (again once the write commits)."""
    _stale(_brand_generation(brand_id))


def shared_competitors_changed() -> None:
    """Seeds or advertisers changed: every brand's cached roster is stale (again once the write commits)."""
    _stale(SHARED_GENERATION)


def _generations(brand_id: UUID) -> tuple[str, str]:
    keys = [_brand_generation(brand_id), SHARED_GENERATION]
    found = cache.get_many(keys)
    for key in keys:
        if key not in found:
            cache.add(key, uuid.uuid4().hex, None)  # a concurrent reader may win; take whichever is stored
            found[key] = cache.get(key) or uuid.uuid4().hex
    return found[keys[0]], found[keys[1]]


@dataclass(frozen=True)
class RosterSlot:
    """Where a brand's roster lives in the cache and the generations it must carry to be current.
    One slot per brand and list (active, removed): a new generation overwrites the old body instead of
    leaving it behind, so a busy writer cannot fill the cache with old rosters."""

    key: str
    stamp: str


def roster_slot(brand_id: UUID, *, removed: bool) -> RosterSlot:
    """The brand's roster slot at the current generations (take it before reading the database)."""
    own, shared = _generations(brand_id)
    list_name = "removed" if removed else "active"
    return RosterSlot(key=f"roster:{ROW_SHAPE}:{brand_id}:{list_name}", stamp=f"{own}:{shared}")


GZIP_MIN_BYTES = 1024  # smaller bodies go out plain


def _get(key: str, stamp: str) -> bytes | None:
    found = cache.get(key)
    return found[1] if isinstance(found, tuple) and found[0] == stamp else None


def cached_bytes(slot: RosterSlot, build, *, gzip: bool = False) -> bytes | None:
    """The roster's bytes, built (and stored) when the slot holds none of this generation. With
    `gzip`, the compressed copy, made from the plain one once per generation, or None when the body
    is too small to be worth it. A reader that took an older stamp may overwrite a newer body; the
    next reader then finds the stamps differ and builds again, so nothing stale is ever served."""
    timeout = settings.COMPETITOR_ROSTER_CACHE_SECONDS
    if gzip:
        body = _get(slot.key + ":gz", slot.stamp)
        if body is None:
            plain = cached_bytes(slot, build)
            body = compress_string(plain) if len(plain) >= GZIP_MIN_BYTES else b""
            cache.set(slot.key + ":gz", (slot.stamp, body), timeout)
        return body or None
    body = _get(slot.key, slot.stamp)
    if body is None:
        body = build()
        cache.set(slot.key, (slot.stamp, body), timeout)
    return body
