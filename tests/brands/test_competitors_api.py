"""The competitor roster: the competitor row rules (docs/decisions.md#competitor-rows) and the merge
(docs/decisions.md#domain-rules)."""

from __future__ import annotations

import uuid

import pytest

from brands.models import BrandCompetitor, CompetitorSeed, SeedOrigin, TrackedGroup, TrackedGroupMember
from brands.selectors.roster_cache import roster_changed
from brands.services.competitors import competitors_discover
from tests.brands.factories import BrandFactory, BrandKitFactory, CompetitorSeedFactory
from tests.brands.querycount import queries_for

pytestmark = pytest.mark.django_db

SPEC_FIELDS = {
    "brand_id",
    "name",
    "id",
    "seed_id",
    "seed_origin",
    "is_seed",
    "override",
    "advertiser_id",
    "advertiser_resolved_at",
    "identity_resolved",
    "canonical_domain",
    "website_url",
    "homepage_url",
    "website_header_image_url",
    "description",
    "notes",
    "industry",
    "brand_classification",
    "country",
    "content_url",
    "youtube_channel_url",
    "is_starred",
    "social_links",
    "analysis_data",
    "brand_intelligence_advertiser_id",
    "active_paid_media_platforms",
    "created_at",
    "updated_at",
    "source",
}


@pytest.fixture
def brand(alice):
    return BrandFactory(owner=alice, name="Acme", domain="acme.example")


def url(brand, suffix=""):
    return f"/api/v1/brands/{brand.id}/competitors{suffix}"


def roster(client, brand, **params):
    response = client.get(url(brand), params)
    assert response.status_code == 200, response.content
    return response.json()


def by_name(rows):
    return {r["name"]: r for r in rows}


# --- Rule 1: override is null unless the diff names something ------------------------------------------


def test_rule_1_a_plain_seed_row_has_no_override(alice_api, brand):
    seed = CompetitorSeedFactory(name="Globex")

    [row] = roster(alice_api, brand)

    assert set(row) == SPEC_FIELDS | {"origin"}  # `origin`: an addition (docs/decisions.md#competitor-discovery)
    assert row["origin"] == "admin"
    assert row["override"] is None
    assert row["is_seed"] is True
    assert row["seed_id"] == str(seed.id)
    assert row["seed_origin"] == "public"
    assert row["source"] == "seo_discovery"
    assert not BrandCompetitor.objects.exists()  # a plain seed row has no copy at all


def test_rule_1_starring_names_the_row_and_unstarring_clears_the_diff(alice_api, brand):
    CompetitorSeedFactory(name="Globex")
    [row] = roster(alice_api, brand)

    starred = alice_api.patch(url(brand, f"/{row['id']}"), {"is_starred": True})
    assert starred.status_code == 200, starred.content
    assert starred.json()["id"] == row["id"]  # the id is stable across the copy's creation
    assert starred.json()["override"] == {"added": False, "removed": False, "starred": True, "edited_fields": []}

    unstarred = alice_api.patch(url(brand, f"/{row['id']}"), {"is_starred": False})
    assert unstarred.json()["override"] is None
    assert roster(alice_api, brand)[0]["override"] is None


# --- Rule 2: added covers adopted discoveries; only added_manually proves a person --------------------------


def test_rule_2_a_manual_add_is_added_and_added_manually(alice_api, alice, brand):
    response = alice_api.post(url(brand), {"name": "Hooli", "website_url": "https://www.hooli.example/"})

    assert response.status_code == 201, response.content
    row = response.json()
    assert row["override"] == {"added": True, "removed": False, "starred": False, "edited_fields": []}
    assert row["analysis_data"]["added_manually"] is True
    assert row["analysis_data"]["added_by"] == str(alice.id)
    assert row["is_seed"] is False and row["seed_id"] is None and row["seed_origin"] is None
    assert row["canonical_domain"] == "hooli.example"
    assert row["identity_resolved"] is True  # found or created the advertiser for the domain
    assert row["id"] in {r["id"] for r in roster(alice_api, brand)}


def test_rule_2_an_adopted_discovery_is_added_without_manual_provenance(alice_api, alice, brand):
    # A seed discovered for another domain; the brand's kit names it, so discovery adopts it.
    CompetitorSeedFactory(name="Umbrella Corp", target_domain="elsewhere.example")
    BrandKitFactory(brand=brand, competitor_names=["Umbrella"])

    summary = competitors_discover(brand=brand)

    assert summary["adopted"] == ["Umbrella Corp"]
    [row] = roster(alice_api, brand)
    assert row["source"] == "seo_discovery"  # the full-data row replaces the kit's name
    assert row["override"]["added"] is True
    assert "added_manually" not in row["analysis_data"]


# --- Rule 3: removed seeds only under ?removed=true ----------------------------------------------------------


def test_rule_3_a_removed_seed_leaves_the_roster_and_is_listed_separately(alice_api, brand):
    CompetitorSeedFactory(name="Globex")
    CompetitorSeedFactory(name="Initech")
    globex = by_name(roster(alice_api, brand))["Globex"]

    assert alice_api.delete(url(brand, f"/{globex['id']}")).status_code == 204

    assert [r["name"] for r in roster(alice_api, brand)] == ["Initech"]
    [removed] = roster(alice_api, brand, removed="true")
    assert removed["id"] == globex["id"]
    assert removed["override"]["removed"] is True
    assert CompetitorSeed.objects.filter(name="Globex").exists()  # never lost


def test_rule_3_restore_brings_a_removed_seed_back(alice_api, brand):
    CompetitorSeedFactory(name="Globex")
    [row] = roster(alice_api, brand)
    alice_api.delete(url(brand, f"/{row['id']}"))

    response = alice_api.post(url(brand, f"/{row['id']}/restore"))

    assert response.status_code == 200, response.content
    assert response.json()["override"] is None
    assert [r["id"] for r in roster(alice_api, brand)] == [row["id"]]
    assert roster(alice_api, brand, removed="true") == []


def test_restoring_an_active_row_is_409(alice_api, brand):
    CompetitorSeedFactory(name="Globex")
    [row] = roster(alice_api, brand)

    response = alice_api.post(url(brand, f"/{row['id']}/restore"))

    assert response.status_code == 409
    assert response.json()["code"] == "invalid_state"


def test_removing_a_manual_row_deletes_it(alice_api, brand):
    row = alice_api.post(url(brand), {"name": "Hooli"}).json()

    assert alice_api.delete(url(brand, f"/{row['id']}")).status_code == 204

    assert roster(alice_api, brand) == []
    assert roster(alice_api, brand, removed="true") == []
    assert not BrandCompetitor.objects.exists()


def test_removing_twice_is_harmless(alice_api, brand):
    CompetitorSeedFactory(name="Globex")
    [row] = roster(alice_api, brand)

    assert alice_api.delete(url(brand, f"/{row['id']}")).status_code == 204
    assert alice_api.delete(url(brand, f"/{row['id']}")).status_code == 204
    assert len(roster(alice_api, brand, removed="true")) == 1


# --- Rule 4: seo_discovery rows carry data and can change; brand_kit rows are name-only --------------------


def test_rule_4_discovered_rows_carry_full_data(alice_api, brand):
    CompetitorSeedFactory(
        name="Globex", canonical_domain="globex.example", country="US", notes="Big.", youtube_channel_url=""
    )

    [row] = roster(alice_api, brand)

    assert row["canonical_domain"] == "globex.example"
    assert row["website_url"] == "https://globex.example/"
    assert row["country"] == "US"
    assert row["social_links"] == {"instagram": "https://instagram.com/rival"}
    assert row["active_paid_media_platforms"] == ["meta"]
    assert row["youtube_channel_url"] is None


def test_rule_4_editing_a_seed_row_records_the_edit_not_the_seed(alice_api, brand):
    seed = CompetitorSeedFactory(name="Globex", description="Seed words.")
    [row] = roster(alice_api, brand)

    edited = alice_api.patch(url(brand, f"/{row['id']}"), {"description": "Our words.", "notes": "Watch them."})

    assert edited.status_code == 200
    assert edited.json()["description"] == "Our words."
    assert sorted(edited.json()["override"]["edited_fields"]) == ["description", "notes"]
    seed.refresh_from_db()
    assert seed.description == "Seed words."

    # Seed improvements still arrive in fields the brand did not edit...
    seed.industry = "footwear"
    seed.save()
    assert roster(alice_api, brand)[0]["industry"] == "footwear"
    # ...and editing a field back to the seed's value stops it being an edit.
    back = alice_api.patch(url(brand, f"/{row['id']}"), {"description": "Seed words."}).json()
    assert back["override"]["edited_fields"] == ["notes"]


def test_rule_4_brand_kit_rows_are_name_only(alice_api, brand):
    kit = BrandKitFactory(brand=brand, competitor_names=["Initech"])

    [row] = roster(alice_api, brand)

    assert row["source"] == "brand_kit"
    assert row["name"] == "Initech"
    assert row["id"] == str(uuid.uuid5(kit.id, "initech"))
    assert row["brand_id"] == str(brand.id)
    for field in ("seed_id", "seed_origin", "override", "advertiser_id", "canonical_domain", "description"):
        assert row[field] is None, field
    assert row["is_seed"] is False and row["is_starred"] is False
    assert row["social_links"] == {} and row["analysis_data"] == {}


@pytest.mark.parametrize(
    ("method", "suffix"), [("patch", ""), ("delete", ""), ("post", "/restore")], ids=["edit", "remove", "restore"]
)
def test_rule_4_changing_a_brand_kit_row_is_409_name_only(alice_api, brand, method, suffix):
    BrandKitFactory(brand=brand, competitor_names=["Initech"])
    [row] = roster(alice_api, brand)

    response = getattr(alice_api, method)(url(brand, f"/{row['id']}{suffix}"), {"is_starred": True})

    assert response.status_code == 409
    assert response.json()["code"] == "name_only"
    assert not BrandCompetitor.objects.exists()


# --- Rule 5: the merge removes duplicates by fuzzy name -----------------------------------------------------


def test_rule_5_kit_names_merge_with_discovered_rows_and_duplicates_go(alice_api, brand):
    CompetitorSeedFactory(name="Globex")
    CompetitorSeedFactory(name="Acme Shoes")
    CompetitorSeedFactory(name="Nestlé")
    BrandKitFactory(
        brand=brand,
        competitor_names=[
            "The Globex Corporation",  # leading "the" and a legal suffix
            "acme-shoes.com",  # punctuation and a domain suffix
            "NESTLE S.A.",  # accents, case, a dotted legal suffix
            "Shoes Acme",  # word order (token sort)
            "Initech",  # new: stays, name-only
            "Initech LLC",  # duplicates the kit's own "Initech"
            "Globox",  # close but under the threshold (ratio 83): a different name
        ],
    )

    rows = roster(alice_api, brand)

    assert [(r["name"], r["source"]) for r in rows] == [
        ("Acme Shoes", "seo_discovery"),
        ("Globex", "seo_discovery"),
        ("Nestlé", "seo_discovery"),
        ("Globox", "brand_kit"),
        ("Initech", "brand_kit"),
    ]


def test_rule_5_a_typo_within_the_threshold_is_a_duplicate(alice_api, brand):
    CompetitorSeedFactory(name="Wayne Enterprises")
    BrandKitFactory(brand=brand, competitor_names=["Wayne Enterprices"])  # ratio 94

    assert [r["source"] for r in roster(alice_api, brand)] == ["seo_discovery"]


def test_rule_5_a_kit_name_of_a_discovered_company_is_a_duplicate_as_discovery_says(alice_api, brand):
    """The merge uses discovery's rule of one company (docs/decisions.md#competitor-discovery): trailing corporate
    words and a name written as one word, which the fuzzy ratio alone calls different names."""
    CompetitorSeedFactory(name="Ford")
    CompetitorSeedFactory(name="PepsiCo")
    CompetitorSeedFactory(name="Meta")
    BrandKitFactory(
        brand=brand,
        competitor_names=["Ford Motor Company", "Pepsi Co", "Meta Platforms", "Nike Group", "Nike"],
    )

    assert [(r["name"], r["source"]) for r in roster(alice_api, brand)] == [
        ("Ford", "seo_discovery"),
        ("Meta", "seo_discovery"),
        ("PepsiCo", "seo_discovery"),
        ("Nike Group", "brand_kit"),  # the kit's own later "Nike" is the same company
    ]


def test_order_is_starred_first_then_discovered_then_name(alice_api, brand):
    CompetitorSeedFactory(name="Zeta")
    CompetitorSeedFactory(name="Beta")
    BrandKitFactory(brand=brand, competitor_names=["Alpha", "Omega"])
    rows = by_name(roster(alice_api, brand))
    alice_api.patch(url(brand, f"/{rows['Zeta']['id']}"), {"is_starred": True})

    assert [r["name"] for r in roster(alice_api, brand)] == ["Zeta", "Beta", "Alpha", "Omega"]


def test_kit_row_ids_are_stable(alice_api, brand):
    BrandKitFactory(brand=brand, competitor_names=["Initech", "Hooli"])

    assert roster(alice_api, brand) == roster(alice_api, brand)


def test_a_removed_seed_does_not_hide_a_kit_name(alice_api, brand):
    CompetitorSeedFactory(name="Globex")
    [row] = roster(alice_api, brand)
    alice_api.delete(url(brand, f"/{row['id']}"))
    BrandKitFactory(brand=brand, competitor_names=["Globex"])

    assert [(r["name"], r["source"]) for r in roster(alice_api, brand)] == [("Globex", "brand_kit")]


# --- The seed layer ----------------------------------------------------------------------------------------


def test_private_seeds_are_seen_only_by_their_owner(alice_api, bob_api, alice, bob, brand):
    CompetitorSeedFactory(name="Shared")
    CompetitorSeedFactory(name="Alice's own", origin=SeedOrigin.PRIVATE, owner=alice)
    CompetitorSeedFactory(name="Bob's own", origin=SeedOrigin.PRIVATE, owner=bob)
    CompetitorSeedFactory(name="Other target", target_domain="other.example")
    bobs_brand = BrandFactory(owner=bob, domain="acme.example")

    alice_rows = {r["name"]: r["seed_origin"] for r in roster(alice_api, brand)}
    bob_rows = {r["name"] for r in roster(bob_api, bobs_brand)}

    assert alice_rows == {"Shared": "public", "Alice's own": "private"}
    assert bob_rows == {"Shared", "Bob's own"}


def test_one_brands_changes_do_not_reach_another_brand(alice_api, alice, brand):
    CompetitorSeedFactory(name="Globex")
    sibling = BrandFactory(owner=alice, domain="acme.example")
    [row] = roster(alice_api, brand)

    alice_api.patch(url(brand, f"/{row['id']}"), {"is_starred": True, "notes": "mine"})
    alice_api.delete(url(brand, f"/{row['id']}"))

    [theirs] = roster(alice_api, sibling)
    assert theirs["override"] is None and theirs["notes"] is None


def test_tracked_advertisers_show_as_brand_intelligence_advertisers(alice_api, brand):
    CompetitorSeedFactory(name="Globex", canonical_domain="globex.example")
    competitors_discover(brand=brand)  # resolves the advertiser and fills the competitors group

    [row] = roster(alice_api, brand)

    assert row["identity_resolved"] is True
    assert row["brand_intelligence_advertiser_id"] == row["advertiser_id"]
    group = TrackedGroup.objects.get(brand=brand, system_slug="competitors")
    assert TrackedGroupMember.objects.filter(group=group, advertiser_id=row["advertiser_id"]).exists()


# --- Writes: validation, duplicates, ownership ------------------------------------------------------------


def test_manual_add_of_an_existing_name_is_409(alice_api, brand):
    CompetitorSeedFactory(name="Globex Inc.")

    response = alice_api.post(url(brand), {"name": "the globex"})

    assert response.status_code == 409
    assert response.json()["code"] == "duplicate_competitor"
    assert not BrandCompetitor.objects.exists()


def test_manual_add_needs_a_name(alice_api, brand):
    response = alice_api.post(url(brand), {"website_url": "https://x.example"})

    assert response.status_code == 422
    assert response.json()["detail"][0]["loc"] == ["body", "name"]


def test_manual_add_cannot_claim_provenance(alice_api, brand):
    # `analysis_data` is not an input: sending it is refused (docs/decisions.md#errors), nothing is added.
    response = alice_api.post(url(brand), {"name": "Hooli", "analysis_data": {"added_manually": False}})

    assert response.status_code == 422
    assert response.json()["detail"][0]["type"] == "extra_forbidden"
    assert response.json()["detail"][0]["loc"] == ["body", "analysis_data"]
    row = alice_api.post(url(brand), {"name": "Hooli"}).json()
    assert row["analysis_data"]["added_manually"] is True


def test_another_users_brand_is_404_everywhere(bob_api, alice_api, brand):
    CompetitorSeedFactory(name="Globex")
    [row] = roster(alice_api, brand)

    assert bob_api.get(url(brand)).status_code == 404
    assert bob_api.post(url(brand), {"name": "Mine"}).status_code == 404
    assert bob_api.patch(url(brand, f"/{row['id']}"), {"is_starred": True}).status_code == 404
    assert bob_api.delete(url(brand, f"/{row['id']}")).status_code == 404
    assert bob_api.post(url(brand, f"/{row['id']}/restore")).status_code == 404
    assert not BrandCompetitor.objects.exists()


def test_a_competitor_of_another_brand_is_404(alice_api, alice, brand):
    CompetitorSeedFactory(name="Globex", target_domain="elsewhere.example")
    other = BrandFactory(owner=alice, domain="elsewhere.example")
    [row] = roster(alice_api, other)

    assert alice_api.patch(url(brand, f"/{row['id']}"), {"is_starred": True}).status_code == 404
    assert alice_api.delete(url(brand, f"/{uuid.uuid4()}")).status_code == 404


def test_api_key_is_refused(alice_key_api, brand):
    response = alice_key_api.get(url(brand))

    assert response.status_code == 403
    assert response.json()["code"] == "api_key_not_allowed"


def test_the_roster_uses_a_constant_number_of_queries(alice_api, brand):
    kit = BrandKitFactory(brand=brand)

    def add_row():
        seed = CompetitorSeedFactory()
        BrandCompetitor.objects.create(brand=brand, seed=seed, name=seed.name, is_starred=True)
        BrandCompetitor.objects.create(brand=brand, name=f"Manual {seed.name}", added=True)
        kit.competitor_names = [*kit.competitor_names, f"Kit name {len(kit.competitor_names)}"]
        kit.save()

    for params in ({}, {"removed": "true"}):
        add_row()
        alice_api.get(url(brand), params)  # warms per-process caches (and caches this roster)
        roster_changed(brand.id)  # so the next read builds it again
        one = queries_for(alice_api, url(brand), params)
        for _ in range(24):
            add_row()
        twenty_five = queries_for(alice_api, url(brand), params)
        cached = queries_for(alice_api, url(brand), params)

        assert one == twenty_five, f"{one} queries for 1 row, {twenty_five} for 25"
        assert cached < one  # served from the cache: no roster queries
