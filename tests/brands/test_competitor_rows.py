"""The roster's rows are rendered by PostgreSQL; other databases (SQLite under `make run`) get the
same rows from Python. Both renderings must agree, field for field."""

from __future__ import annotations

import json

import pytest

from brands.models import BrandCompetitor, SeedOrigin, TrackedGroup, TrackedGroupMember
from brands.selectors.competitor_rows import discovered_row, discovered_rows, seed_row_id
from brands.services.competitors import competitors_discover
from tests.brands.factories import AdvertiserFactory, BrandFactory, BrandKitFactory, CompetitorSeedFactory

pytestmark = pytest.mark.django_db


@pytest.fixture
def brand(alice):
    brand = BrandFactory(owner=alice, domain="acme.example")
    plain = CompetitorSeedFactory(name="Plain", brand_classification={"primary_industry": "x", "industries": ["x"]})
    starred = CompetitorSeedFactory(name="Starred", youtube_channel_url="https://youtube.com/@s")
    edited = CompetitorSeedFactory(name="Edited", notes="seed notes")
    removed = CompetitorSeedFactory(name="Removed")
    CompetitorSeedFactory(name="Private", origin=SeedOrigin.PRIVATE, owner=alice)
    CompetitorSeedFactory(name="Adoptable Inc", target_domain="elsewhere.example")
    BrandKitFactory(brand=brand, competitor_names=["Adoptable"])
    competitors_discover(brand=brand)  # adopts, resolves advertisers, fills the tracked group
    for seed, changes in (
        (starred, {"is_starred": True}),
        (
            edited,
            {
                "name": "Edited Name",
                "notes": "ours",
                "canonical_domain": "edited.example",
                "edited_fields": ["name", "notes", "canonical_domain"],
            },
        ),
        (removed, {"removed": True}),
        (plain, {}),  # a copy that differs in nothing
    ):
        BrandCompetitor.objects.create(
            id=seed_row_id(brand.id, seed.id), brand=brand, seed=seed, **{"name": seed.name, **changes}
        )
    BrandCompetitor.objects.create(
        brand=brand,
        name="Manual",
        added=True,
        website_url="https://manual.example",
        analysis_data={"added_manually": True},
    )
    group = TrackedGroup.objects.create(brand=brand, name="Extra")
    TrackedGroupMember.objects.create(group=group, advertiser=AdvertiserFactory(domain="edited.example"))
    return brand


def rendered(rows):
    return sorted((json.loads(r.json) for r in rows), key=lambda r: r["id"])


@pytest.mark.parametrize("removed", [False, True])
def test_python_and_postgresql_render_the_same_rows(brand, removed):
    by_sql = rendered(discovered_rows(brand, removed=removed))
    by_python = rendered(discovered_rows(brand, removed=removed, python=True))

    assert by_sql == by_python
    assert len(by_sql) == (1 if removed else 6)


def test_and_the_same_single_rows(brand):
    for copy in BrandCompetitor.objects.filter(brand=brand).select_related("seed"):
        assert discovered_row(brand, seed=copy.seed, copy=copy) == discovered_row(
            brand, seed=copy.seed, copy=copy, python=True
        )
