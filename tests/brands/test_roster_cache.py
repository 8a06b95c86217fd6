"""The cached competitors roster (docs/decisions.md#domain-rules, "Cache"): never stale after a write, gzip
when accepted.

Each write-path test reads the roster first (which caches it), writes through the API or a
service, and reads again: the second read must show the write. A last test commits for real and
reads from another connection while the write is still open, the one case the after-commit bump
exists for.
"""

from __future__ import annotations

import gzip
import json
import threading

import pytest
from django.core.cache import cache
from django.db import connection, transaction

from brands.models import Advertiser, BrandCompetitor, BrandKit, CompetitorSeed
from brands.selectors.roster_cache import roster_slot
from brands.services.brands import brand_kit_update
from brands.services.competitors import competitors_discover
from tests.brands.factories import AdvertiserFactory, BrandFactory, BrandKitFactory, CompetitorSeedFactory
from tests.conftest import HttpsAPIClient, jwt_for

pytestmark = pytest.mark.django_db


@pytest.fixture
def brand(alice):
    return BrandFactory(owner=alice, name="Acme", domain="acme.example")


def url(brand, suffix=""):
    return f"/api/v1/brands/{brand.id}/competitors{suffix}"


def roster(client, brand, **params) -> dict[str, dict]:
    response = client.get(url(brand), params)
    assert response.status_code == 200, response.content
    return {row["name"]: row for row in response.json()}


def test_a_second_read_comes_from_the_cache(alice_api, brand, django_assert_max_num_queries):
    CompetitorSeedFactory(name="Globex")
    first = alice_api.get(url(brand))

    with django_assert_max_num_queries(2):  # the user (JWT) and the brand; no roster query
        second = alice_api.get(url(brand))

    assert second.content == first.content
    assert second["Content-Type"] == "application/json"
    assert "X-RateLimit-Remaining" in second  # the middleware still adds its headers


def test_a_write_replaces_the_cached_roster_instead_of_adding_one(alice_api, brand):
    roster(alice_api, brand)
    alice_api.post(url(brand), {"name": "Hooli"})
    roster(alice_api, brand)

    stamp, body = cache.get(roster_slot(brand.id, removed=False).key)
    assert stamp == roster_slot(brand.id, removed=False).stamp
    assert b"Hooli" in body


# --- No stale roster after any write ----------------------------------------------------------------


def test_adding_a_competitor(alice_api, brand):
    roster(alice_api, brand)

    assert alice_api.post(url(brand), {"name": "Hooli"}).status_code == 201

    assert "Hooli" in roster(alice_api, brand)


def test_starring_and_editing_a_seed_row_and_a_manual_row(alice_api, brand):
    CompetitorSeedFactory(name="Globex")
    alice_api.post(url(brand), {"name": "Hooli"})
    rows = roster(alice_api, brand)

    alice_api.patch(url(brand, f"/{rows['Globex']['id']}"), {"is_starred": True, "notes": "Cheaper"})
    alice_api.patch(url(brand, f"/{rows['Hooli']['id']}"), {"name": "Hooli XYZ"})

    after = roster(alice_api, brand)
    assert after["Globex"]["is_starred"] is True and after["Globex"]["notes"] == "Cheaper"
    assert "Hooli XYZ" in after and "Hooli" not in after


def test_removing_and_restoring_a_seed_row_and_removing_a_manual_row(alice_api, brand):
    CompetitorSeedFactory(name="Globex")
    alice_api.post(url(brand), {"name": "Hooli"})
    rows = roster(alice_api, brand)
    roster(alice_api, brand, removed="true")

    alice_api.delete(url(brand, f"/{rows['Globex']['id']}"))
    alice_api.delete(url(brand, f"/{rows['Hooli']['id']}"))

    assert roster(alice_api, brand) == {}
    assert list(roster(alice_api, brand, removed="true")) == ["Globex"]

    alice_api.post(url(brand, f"/{rows['Globex']['id']}/restore"))

    assert list(roster(alice_api, brand)) == ["Globex"]
    assert roster(alice_api, brand, removed="true") == {}


def test_kit_create_patch_and_delete(alice_api, brand):
    roster(alice_api, brand)

    created = alice_api.post(
        "/api/v1/brand-kits", {"brand_id": str(brand.id), "name": "Main", "competitor_names": ["Initech"]}
    )
    assert list(roster(alice_api, brand)) == ["Initech"]

    alice_api.patch(f"/api/v1/brand-kits/{created.json()['id']}", {"competitor_names": ["Umbrella"]})
    assert list(roster(alice_api, brand)) == ["Umbrella"]

    alice_api.patch(f"/api/v1/brand-kits/{created.json()['id']}", {"voice": "Warm."})  # the rows' updated_at
    assert roster(alice_api, brand)["Umbrella"]["updated_at"] == BrandKit.objects.get().updated_at.strftime(
        "%Y-%m-%dT%H:%M:%S.%fZ"
    )

    BrandKit.objects.get().delete()  # no endpoint deletes a kit; the admin and the brand's deletion do
    assert roster(alice_api, brand) == {}


def test_seeds_created_edited_and_deleted(alice_api, brand):
    roster(alice_api, brand)

    seed = CompetitorSeedFactory(name="Globex")  # as the audit and the admin write them
    assert list(roster(alice_api, brand)) == ["Globex"]

    seed.description = "New text."
    seed.save()
    assert roster(alice_api, brand)["Globex"]["description"] == "New text."

    seed.delete()
    assert roster(alice_api, brand) == {}


def test_discovery_adopting_a_seed_and_resolving_identities(alice_api, brand):
    CompetitorSeedFactory(name="Globex", canonical_domain="globex.example")
    CompetitorSeedFactory(name="Umbrella Corp", target_domain="elsewhere.example")
    BrandKitFactory(brand=brand, competitor_names=["Umbrella"])
    before = roster(alice_api, brand)
    assert before["Globex"]["advertiser_id"] is None and before["Umbrella"]["source"] == "brand_kit"

    competitors_discover(brand=brand)  # adopts by get_or_create, resolves by UPDATE (no signals)

    after = roster(alice_api, brand)
    assert after["Globex"]["advertiser_id"] == str(Advertiser.objects.get(domain="globex.example").id)
    assert after["Globex"]["brand_intelligence_advertiser_id"] == after["Globex"]["advertiser_id"]
    assert after["Umbrella Corp"]["source"] == "seo_discovery"


def test_another_brand_resolving_a_shared_seed(alice_api, bob, brand):
    CompetitorSeedFactory(name="Globex", canonical_domain="globex.example")
    roster(alice_api, brand)

    competitors_discover(brand=BrandFactory(owner=bob, domain="acme.example"))  # same seed layer

    assert roster(alice_api, brand)["Globex"]["identity_resolved"] is True


def test_tracking_an_advertiser_and_deleting_it(alice_api, brand):
    advertiser = AdvertiserFactory(domain="globex.example")
    CompetitorSeedFactory(name="Globex", canonical_domain="globex.example", advertiser=advertiser)
    assert roster(alice_api, brand)["Globex"]["brand_intelligence_advertiser_id"] is None

    created = alice_api.post(
        f"/api/v1/brands/{brand.id}/brand-intelligence/tracked-groups",
        {"name": "Watch", "shared_modules": ["seo"], "advertiser_ids": [str(advertiser.id)]},
    )
    assert created.status_code == 201, created.content
    assert roster(alice_api, brand)["Globex"]["brand_intelligence_advertiser_id"] == str(advertiser.id)

    advertiser.delete()  # the seed's advertiser is set to null by an UPDATE
    assert roster(alice_api, brand)["Globex"]["advertiser_id"] is None


def test_changing_the_brands_domain_changes_its_seed_layer(alice_api, brand):
    CompetitorSeedFactory(name="Globex")
    CompetitorSeedFactory(name="Initech", target_domain="other.example")
    assert list(roster(alice_api, brand)) == ["Globex"]

    assert alice_api.patch(f"/api/v1/brands/{brand.id}", {"domain": "other.example"}).status_code == 200

    assert list(roster(alice_api, brand)) == ["Initech"]


def test_an_advertisers_name_is_not_in_the_roster_so_renaming_it_changes_nothing(alice_api, brand):
    advertiser = AdvertiserFactory(domain="globex.example", name="Globex Advertiser")
    CompetitorSeedFactory(name="Globex", canonical_domain="globex.example", advertiser=advertiser)

    assert "Globex Advertiser" not in alice_api.get(url(brand)).content.decode()


# --- After commit ---------------------------------------------------------------------------------------------


@pytest.mark.django_db(transaction=True)
def test_a_read_from_another_connection_during_a_write_is_not_served_after_it_commits(alice, brand):
    """The reader builds the roster from the committed (old) rows while the write is open and
    caches it under the generation of that moment; once the write commits, the next read is new."""
    kit = BrandKitFactory(brand=brand, competitor_names=["Initech"])
    client = HttpsAPIClient()
    client.credentials(HTTP_AUTHORIZATION=f"Bearer {jwt_for(alice)}")

    def read_elsewhere(into: list) -> None:
        try:
            into.append(client.get(url(brand)).json())
        finally:
            connection.close()

    during: list = []
    with transaction.atomic():
        brand_kit_update(owner=alice, kit_id=kit.id, changes={"competitor_names": ["Umbrella"]})
        reader = threading.Thread(target=read_elsewhere, args=(during,))
        reader.start()
        reader.join()
        stamp_while_open = roster_slot(brand.id, removed=False).stamp

    assert [r["name"] for r in during[0]] == ["Initech"]  # the other connection saw the committed rows
    assert roster_slot(brand.id, removed=False).stamp != stamp_while_open  # bumped again on commit
    assert [r["name"] for r in client.get(url(brand)).json()] == ["Umbrella"]


# --- gzip ------------------------------------------------------------------------------------------------------


def test_a_large_roster_is_gzip_encoded_when_the_client_accepts_it(alice_api, brand):
    CompetitorSeed.objects.bulk_create(
        [CompetitorSeedFactory.build(name=f"Rival {i:04d}", target_domain="acme.example") for i in range(200)]
    )
    plain = alice_api.get(url(brand))

    zipped = alice_api.get(url(brand), HTTP_ACCEPT_ENCODING="gzip, deflate, br")

    assert "Content-Encoding" not in plain
    assert zipped["Content-Encoding"] == "gzip"
    assert "Accept-Encoding" in zipped["Vary"] and "Accept-Encoding" in plain["Vary"]
    assert zipped["Content-Type"] == "application/json"
    assert gzip.decompress(zipped.content) == plain.content
    assert len(zipped.content) < len(plain.content) / 4
    assert len(json.loads(plain.content)) == 200


def test_a_small_roster_goes_out_plain_even_to_a_gzip_client(alice_api, brand):
    response = alice_api.get(url(brand), HTTP_ACCEPT_ENCODING="gzip")

    assert response.content == b"[]"
    assert "Content-Encoding" not in response


def test_other_json_responses_are_not_compressed(alice_api, brand):
    BrandCompetitor.objects.create(brand=brand, name="x" * 100, added=True, notes="y" * 5000)

    response = alice_api.get(f"/api/v1/brands/{brand.id}", HTTP_ACCEPT_ENCODING="gzip")

    assert response.status_code == 200
    assert "Content-Encoding" not in response
