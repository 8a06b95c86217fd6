from __future__ import annotations

import uuid

import pytest

from brands.models import Brand, BrandKit
from tests.brands.factories import BrandFactory, BrandKitFactory, make_team
from tests.brands.querycount import assert_constant_queries

pytestmark = pytest.mark.django_db


# --- Brands ------------------------------------------------------------------------------------------


def test_create_brand_derives_the_domain_from_the_website(alice_api, alice):
    response = alice_api.post(
        "/api/v1/brands",
        {"name": "Acme", "website_url": "https://www.Acme.com/shop", "social_links": {"x": "https://x.com/acme"}},
    )

    assert response.status_code == 201, response.content
    body = response.json()
    assert body["domain"] == "acme.com"
    assert body["brand_classification"] is None
    assert Brand.objects.get(id=body["id"]).owner == alice


def test_create_brand_rejects_a_bad_domain(alice_api):
    response = alice_api.post("/api/v1/brands", {"name": "Acme", "domain": "not a domain"})

    assert response.status_code == 422
    assert response.json()["detail"][0]["loc"] == ["body", "domain"]


def test_list_brands_is_an_envelope_of_only_mine_newest_first(alice_api, alice, bob):
    first = BrandFactory(owner=alice, name="First")
    second = BrandFactory(owner=alice, name="Second")
    BrandFactory(owner=bob)

    body = alice_api.get("/api/v1/brands").json()

    assert body["total"] == 2
    assert body["has_more"] is False
    assert [b["id"] for b in body["items"]] == [str(second.id), str(first.id)]


def test_patch_brand_rederives_domain_and_renames_linked_teams(alice_api, alice):
    brand = BrandFactory(owner=alice, website_url="https://old.example", domain="old.example")
    team = make_team(alice, brand_id=brand.id, brand_name=brand.name)

    response = alice_api.patch(f"/api/v1/brands/{brand.id}", {"website_url": "https://new.example", "name": "New"})

    assert response.status_code == 200, response.content
    assert response.json()["domain"] == "new.example"
    team.refresh_from_db()
    assert team.brand_name == "New"


def test_delete_brand_removes_it_and_unlinks_teams(alice_api, alice):
    brand = BrandFactory(owner=alice)
    kit = BrandKitFactory(brand=brand)
    team = make_team(alice, brand_id=brand.id, brand_kit_id=kit.id, brand_name=brand.name)

    response = alice_api.delete(f"/api/v1/brands/{brand.id}")

    assert response.status_code == 204
    assert not Brand.objects.filter(id=brand.id).exists()
    assert not BrandKit.objects.filter(id=kit.id).exists()
    team.refresh_from_db()
    assert (team.brand_id, team.brand_kit_id, team.brand_name) == (None, None, "")


@pytest.mark.parametrize("method", ["get", "patch", "delete"])
def test_another_users_brand_is_404(bob_api, alice, method):
    brand = BrandFactory(owner=alice)

    response = getattr(bob_api, method)(f"/api/v1/brands/{brand.id}", {"name": "Mine now"})

    assert response.status_code == 404
    assert response.json()["code"] == "not_found"
    assert Brand.objects.get(id=brand.id).name == brand.name


def test_anonymous_is_401_and_api_key_is_403(api, alice_key_api, alice):
    brand = BrandFactory(owner=alice)

    assert api.get(f"/api/v1/brands/{brand.id}").status_code == 401
    response = alice_key_api.get(f"/api/v1/brands/{brand.id}")
    assert response.status_code == 403
    assert response.json()["code"] == "api_key_not_allowed"


def test_malformed_brand_id_is_422(alice_api):
    response = alice_api.get("/api/v1/brands/not-a-uuid")

    assert response.status_code == 422
    assert response.json()["detail"][0]["loc"] == ["path", "brand_id"]


# --- Brand kits -------------------------------------------------------------------------------------------


def test_create_kit_for_my_brand(alice_api, alice):
    brand = BrandFactory(owner=alice)

    response = alice_api.post(
        "/api/v1/brand-kits",
        {
            "brand_id": str(brand.id),
            "name": "Main kit",
            "competitor_names": ["Globex", "Initech Inc."],
            "voice": "Warm and direct.",
            "colors": ["#FF0000", "#00aa00"],
            "fonts": ["Inter"],
            "tagline": "Make it happen",
            "audiences": ["runners"],
        },
    )

    assert response.status_code == 201, response.content
    body = response.json()
    assert body["brand_id"] == str(brand.id)
    assert body["colors"] == ["#ff0000", "#00aa00"]
    assert body["competitor_names"] == ["Globex", "Initech Inc."]
    assert body["team_id"] is None
    assert BrandKit.objects.get(id=body["id"]).owner == alice


def test_create_kit_for_someone_elses_brand_is_404(bob_api, alice):
    brand = BrandFactory(owner=alice)

    response = bob_api.post("/api/v1/brand-kits", {"brand_id": str(brand.id), "name": "Sneaky"})

    assert response.status_code == 404
    assert not BrandKit.objects.exists()


def test_kit_colours_must_be_hex(alice_api, alice):
    brand = BrandFactory(owner=alice)

    response = alice_api.post("/api/v1/brand-kits", {"brand_id": str(brand.id), "name": "K", "colors": ["red"]})

    assert response.status_code == 422
    assert response.json()["detail"][0]["loc"] == ["body", "colors"]


def test_patch_kit_and_list_filtered_by_brand(alice_api, alice):
    kit = BrandKitFactory(brand=BrandFactory(owner=alice))
    other = BrandKitFactory(brand=BrandFactory(owner=alice))

    response = alice_api.patch(f"/api/v1/brand-kits/{kit.id}", {"competitor_names": ["Umbrella"]})
    listed = alice_api.get("/api/v1/brand-kits", {"brand_id": str(kit.brand_id)}).json()

    assert response.status_code == 200
    assert response.json()["competitor_names"] == ["Umbrella"]
    assert response.json()["name"] == kit.name
    assert [k["id"] for k in listed["items"]] == [str(kit.id)]
    assert str(other.id) not in {k["id"] for k in listed["items"]}


def test_a_brands_kits_name_at_most_the_cap_together(alice_api, alice, settings):
    settings.BRAND_KIT_NAMES_PER_BRAND_MAX = 5
    brand = BrandFactory(owner=alice)
    kit = BrandKitFactory(brand=brand, competitor_names=["A1", "B2", "C3"])
    BrandKitFactory(brand=BrandFactory(owner=alice), competitor_names=["Other brand"] * 5)  # not counted

    too_many_new = alice_api.post(
        "/api/v1/brand-kits", {"brand_id": str(brand.id), "name": "Second", "competitor_names": ["D4", "E5", "F6"]}
    )
    too_many_patch = alice_api.patch(f"/api/v1/brand-kits/{kit.id}", {"competitor_names": list("abcdef")})
    at_the_cap = alice_api.post(
        "/api/v1/brand-kits", {"brand_id": str(brand.id), "name": "Second", "competitor_names": ["D4", "E5"]}
    )

    assert too_many_new.status_code == 422, too_many_new.content
    assert too_many_new.json()["detail"] == [
        {
            "type": "value_error",
            "loc": ["body", "competitor_names"],
            "msg": "Value error, A brand's kits may name at most 5 competitors together; this brand's other kits "
            "name 3, so this kit may name at most 2 (got 3).",
            "ctx": {"error": too_many_new.json()["detail"][0]["ctx"]["error"]},
        }
    ]
    assert too_many_patch.status_code == 422
    assert too_many_patch.json()["detail"][0]["loc"] == ["body", "competitor_names"]
    kit.refresh_from_db()
    assert kit.competitor_names == ["A1", "B2", "C3"]
    assert at_the_cap.status_code == 201, at_the_cap.content
    assert BrandKit.objects.filter(brand=brand).count() == 2


@pytest.mark.parametrize("method", ["get", "patch"])
def test_another_users_kit_is_404(bob_api, alice, method):
    kit = BrandKitFactory(brand=BrandFactory(owner=alice))

    response = getattr(bob_api, method)(f"/api/v1/brand-kits/{kit.id}", {"name": "x"})

    assert response.status_code == 404


def test_missing_kit_is_404(alice_api):
    assert alice_api.get(f"/api/v1/brand-kits/{uuid.uuid4()}").status_code == 404


# --- Constant query counts ------------------------------------------------------------------------------


def test_brand_and_kit_lists_use_a_constant_number_of_queries(alice_api, alice):
    assert_constant_queries(alice_api, "/api/v1/brands", lambda: BrandFactory(owner=alice))
    assert_constant_queries(
        alice_api, "/api/v1/brand-kits", lambda: BrandKitFactory(brand=BrandFactory(owner=alice), team=make_team(alice))
    )
