"""Discovered competitor rows (seed layer read through the brand's copies, and manual rows),
rendered as JSON text in the shape of CompetitorSerializer.

On PostgreSQL the database renders them (`json_build_object`, one query): a roster of thousands of
rows then costs a few milliseconds of Python. Elsewhere (SQLite under `make run`) the same rows are
built in Python; tests/brands/test_competitor_rows.py checks that both renderings agree.

A row's values: a field named in the copy's `edited_fields` comes from the copy, every other field
from the seed; a manual row (no seed) is all copy. The advertiser follows the canonical domain. The
id of a seed row is derived from brand and seed (`seed_row_id`), the same before and after the
brand's copy exists.
"""

from __future__ import annotations

import hashlib
import json
import uuid
from dataclasses import dataclass
from datetime import UTC, datetime
from typing import Any
from uuid import UUID

from django.db import connection
from django.db.models import Q

from brands.domain.matching import normalize_name
from brands.models import (
    Brand,
    BrandCompetitor,
    CompetitorOrigin,
    CompetitorSeed,
    CompetitorSource,
    TrackedGroupMember,
)

# Text fields, rendered as null when empty.
TEXT_FIELDS = (
    "canonical_domain",
    "website_url",
    "homepage_url",
    "website_header_image_url",
    "description",
    "notes",
    "industry",
    "country",
    "content_url",
    "youtube_channel_url",
)


def seed_row_id(brand_id: UUID, seed_id: UUID) -> UUID:
    """The id of a brand's row for a seed: the MD5 of "<brand id>:<seed id>" read as a UUID
    (the roster SQL computes the same)."""
    return uuid.UUID(hashlib.md5(f"{brand_id}:{seed_id}".encode(), usedforsecurity=False).hexdigest())


def brand_seeds(brand: Brand):
    """The seed layer of a brand: seeds for its domain, public or the owner's private ones."""
    if not brand.domain:
        return CompetitorSeed.objects.none()
    return CompetitorSeed.objects.filter(target_domain=brand.domain).filter(
        Q(owner__isnull=True) | Q(owner_id=brand.owner_id)
    )


def iso(value: datetime | None) -> str | None:
    """Timestamps as the roster renders them: UTC, microseconds, "Z"."""
    return value.astimezone(UTC).strftime("%Y-%m-%dT%H:%M:%S.%fZ") if value else None


@dataclass(frozen=True)
class Row:
    """A discovered row: what the merge needs, and the row's JSON for the response."""

    name: str
    is_starred: bool
    key: str  # normalised name
    tiebreak: str
    json: str


# --- PostgreSQL: the database renders the rows --------------------------------------------------------


def _field(name: str) -> str:
    """The effective value: the copy's when there is no seed or the copy edited the field."""
    return f"(CASE WHEN s.id IS NULL OR c.edited_fields ? '{name}' THEN c.{name} ELSE s.{name} END)"


def _ts(expr: str) -> str:
    return f"""to_char(({expr}) AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.US"Z"')"""


_ADVERTISER = "(CASE WHEN s.id IS NULL OR c.edited_fields ? 'canonical_domain' THEN c.{0} ELSE s.{0} END)"
_OVERRIDE = """CASE
    WHEN c.id IS NULL OR NOT (c.added OR c.removed OR c.is_starred OR jsonb_array_length(c.edited_fields) > 0)
    THEN NULL
    ELSE json_build_object('added', c.added, 'removed', c.removed, 'starred', c.is_starred,
                           'edited_fields', c.edited_fields) END"""
_ROW_JSON = ",\n        ".join(
    [
        "'id', CASE WHEN s.id IS NULL THEN c.id ELSE md5(%(brand)s::text || ':' || s.id::text)::uuid END",
        "'brand_id', %(brand)s::uuid",
        f"'name', {_field('name')}",
        "'seed_id', s.id",
        "'seed_origin', s.origin",
        "'is_seed', s.id IS NOT NULL",
        f"'override', {_OVERRIDE}",
        f"'advertiser_id', {_ADVERTISER.format('advertiser_id')}",
        f"'advertiser_resolved_at', {_ts(_ADVERTISER.format('advertiser_resolved_at'))}",
        f"'identity_resolved', {_ADVERTISER.format('advertiser_id')} IS NOT NULL",
        *[f"'{f}', NULLIF({_field(f)}, '')" for f in TEXT_FIELDS],
        f"'brand_classification', {_field('brand_classification')}",
        "'is_starred', COALESCE(c.is_starred, false)",
        f"'social_links', COALESCE({_field('social_links')}, '{{}}'::jsonb)",
        f"'analysis_data', COALESCE({_field('analysis_data')}, '{{}}'::jsonb)",
        # Only constant SQL is composed here; every value is a query parameter.
        f"'brand_intelligence_advertiser_id', (SELECT t.advertiser_id FROM tracked t "  # noqa: S608
        f"WHERE t.advertiser_id = {_ADVERTISER.format('advertiser_id')})",
        f"'active_paid_media_platforms', COALESCE({_field('active_paid_media_platforms')}, '[]'::jsonb)",
        f"'created_at', {_ts('COALESCE(s.created_at, c.created_at)')}",
        f"'updated_at', {_ts('GREATEST(s.updated_at, c.updated_at)')}",
        f"'source', '{CompetitorSource.SEO_DISCOVERY.value}'",
        f"'origin', COALESCE(s.discovered_by, '{CompetitorOrigin.MANUAL.value}')",
    ]
)
_NAME_KEY = "(CASE WHEN s.id IS NULL OR c.edited_fields ? 'name' THEN NULL ELSE s.name_key END)"

_SELECT = """
SELECT {name} AS name, COALESCE(c.is_starred, false), s.id, c.id, {name_key},
    json_build_object(
        {row}
    )::text"""
_TRACKED = """
WITH tracked AS (
    SELECT DISTINCT m.advertiser_id FROM brands_trackedgroupmember m
    JOIN brands_trackedgroup g ON g.id = m.group_id WHERE g.brand_id = %(brand)s
)"""
_IN_LAYER = "(s.target_domain = %(domain)s AND %(domain)s <> '' AND (s.owner_id IS NULL OR s.owner_id = %(owner)s))"
# Seed rows of the layer (with the brand's copy, if any), then the copies that are not: manual
# rows and adopted seeds from outside the layer. Both halves are index look-ups.
_ROSTER_SQL = (
    _TRACKED
    + _SELECT
    + f"""
FROM brands_competitorseed s
LEFT JOIN brands_brandcompetitor c ON c.seed_id = s.id AND c.brand_id = %(brand)s
WHERE {_IN_LAYER} AND COALESCE(c.removed, false) = %(removed)s
UNION ALL"""
    + _SELECT
    + f"""
FROM brands_brandcompetitor c
LEFT JOIN brands_competitorseed s ON s.id = c.seed_id
WHERE c.brand_id = %(brand)s AND c.removed = %(removed)s
    AND (c.seed_id IS NULL OR (c.added AND NOT {_IN_LAYER}))"""
)
_ONE_SQL = (
    _TRACKED
    + _SELECT
    + """
FROM (SELECT %(seed)s::uuid AS seed_id, %(copy)s::uuid AS copy_id) p
LEFT JOIN brands_competitorseed s ON s.id = p.seed_id
LEFT JOIN brands_brandcompetitor c ON c.id = p.copy_id"""
)
_ROSTER_SQL = _ROSTER_SQL.replace("{name}", _field("name")).replace("{name_key}", _NAME_KEY).replace("{row}", _ROW_JSON)
_ONE_SQL = _ONE_SQL.replace("{name}", _field("name")).replace("{name_key}", _NAME_KEY).replace("{row}", _ROW_JSON)


def _sql_rows(sql: str, params: dict) -> list[Row]:
    with connection.cursor() as cursor:
        cursor.execute(sql, params)
        fetched = cursor.fetchall()
    return [
        Row(name, is_starred, name_key or normalize_name(name), str(seed_id or copy_id), text)
        for name, is_starred, seed_id, copy_id, name_key, text in fetched
    ]


# --- Elsewhere: Python renders the same rows ----------------------------------------------------------------


def _value(field: str, seed: CompetitorSeed | None, copy: BrandCompetitor | None) -> Any:
    if seed is None or (copy is not None and field in copy.edited_fields):
        return getattr(copy, field)
    return getattr(seed, field)


def _row_dict(brand: Brand, seed: CompetitorSeed | None, copy: BrandCompetitor | None, tracked: set) -> dict:
    own_domain = seed is None or (copy is not None and "canonical_domain" in copy.edited_fields)
    advertiser_id = (copy if own_domain else seed).advertiser_id
    resolved_at = (copy if own_domain else seed).advertiser_resolved_at
    override = None
    if copy is not None and (copy.added or copy.removed or copy.is_starred or copy.edited_fields):
        override = {
            "added": copy.added,
            "removed": copy.removed,
            "starred": copy.is_starred,
            "edited_fields": list(copy.edited_fields),
        }
    stamps = [x for x in ((seed.updated_at if seed else None), (copy.updated_at if copy else None)) if x]
    return {
        "id": str(seed_row_id(brand.id, seed.id) if seed is not None else copy.id),
        "brand_id": str(brand.id),
        "name": _value("name", seed, copy),
        "seed_id": str(seed.id) if seed is not None else None,
        "seed_origin": seed.origin if seed is not None else None,
        "is_seed": seed is not None,
        "override": override,
        "advertiser_id": str(advertiser_id) if advertiser_id else None,
        "advertiser_resolved_at": iso(resolved_at),
        "identity_resolved": advertiser_id is not None,
        **{f: _value(f, seed, copy) or None for f in TEXT_FIELDS},
        "brand_classification": _value("brand_classification", seed, copy),
        "is_starred": copy.is_starred if copy is not None else False,
        "social_links": _value("social_links", seed, copy) or {},
        "analysis_data": _value("analysis_data", seed, copy) or {},
        "brand_intelligence_advertiser_id": str(advertiser_id) if advertiser_id in tracked else None,
        "active_paid_media_platforms": _value("active_paid_media_platforms", seed, copy) or [],
        "created_at": iso(seed.created_at if seed is not None else copy.created_at),
        "updated_at": iso(max(stamps)),
        "source": CompetitorSource.SEO_DISCOVERY.value,
        "origin": seed.discovered_by if seed is not None else CompetitorOrigin.MANUAL.value,
    }


def _python_rows(brand: Brand, pairs: list[tuple[CompetitorSeed | None, BrandCompetitor | None]]) -> list[Row]:
    tracked = set(
        TrackedGroupMember.objects.filter(group__brand=brand).values_list("advertiser_id", flat=True).distinct()
    )
    rows = []
    for seed, copy in pairs:
        row = _row_dict(brand, seed, copy, tracked)
        key = seed.name_key if seed is not None and "name" not in (copy.edited_fields if copy else []) else ""
        rows.append(
            Row(
                row["name"],
                row["is_starred"],
                key or normalize_name(row["name"]),
                str(seed.id if seed is not None else copy.id),
                json.dumps(row, ensure_ascii=False, separators=(",", ":")),
            )
        )
    return rows


def _python_roster_pairs(brand: Brand, removed: bool) -> list[tuple[CompetitorSeed | None, BrandCompetitor | None]]:
    seeds = list(brand_seeds(brand))
    copies = list(BrandCompetitor.objects.filter(brand=brand).select_related("seed"))
    by_seed = {c.seed_id: c for c in copies if c.seed_id is not None}
    layer = {s.id for s in seeds}
    pairs = [(s, by_seed.get(s.id)) for s in seeds]
    pairs += [(c.seed, c) for c in copies if c.seed_id is None or (c.added and c.seed_id not in layer)]
    return [(s, c) for s, c in pairs if (c is not None and c.removed) == removed]


# --- Entry points ------------------------------------------------------------------------------------------


def _on_postgresql() -> bool:
    return connection.vendor == "postgresql"


def discovered_rows(brand: Brand, *, removed: bool, python: bool = False) -> list[Row]:
    """The brand's discovered rows, active or (removed=True) removed. `python` forces the Python
    rendering (for the test that compares both)."""
    if _on_postgresql() and not python:
        params = {"brand": brand.id, "owner": brand.owner_id, "domain": brand.domain or "", "removed": removed}
        return _sql_rows(_ROSTER_SQL, params)
    return _python_rows(brand, _python_roster_pairs(brand, removed))


def discovered_row(
    brand: Brand, *, seed: CompetitorSeed | None, copy: BrandCompetitor | None, python: bool = False
) -> dict[str, Any]:
    """One discovered row, rendered exactly as in the roster."""
    if _on_postgresql() and not python:
        params = {"brand": brand.id, "seed": seed.id if seed else None, "copy": copy.id if copy else None}
        [row] = _sql_rows(_ONE_SQL, params)
    else:
        [row] = _python_rows(brand, [(seed, copy)])
    return json.loads(row.json)
