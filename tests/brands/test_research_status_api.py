from __future__ import annotations

import pytest

from brands.models import ResearchItem
from tests.brands.factories import BrandFactory, BrandKitFactory, make_team

pytestmark = pytest.mark.django_db

ORDER = ["competitors", "brand_classification", "paid_media", "organic_social", "seo", "website"]


def status_of(client, brand):
    response = client.get(f"/api/v1/brands/{brand.id}/research-status")
    assert response.status_code == 200, response.content
    return response.json()


def test_a_new_brand_has_six_items_not_started_and_is_pending(alice_api, alice):
    brand = BrandFactory(owner=alice)

    body = status_of(alice_api, brand)

    assert body["items"] == [
        {"module": m, "status": "not_started", "error_message": None, "updated_at": None} for m in ORDER
    ]
    assert body["social_readiness"] == {"state": "pending", "kit_id": None}


def test_items_keep_the_contract_order_and_show_errors(alice_api, alice):
    brand = BrandFactory(owner=alice)
    ResearchItem.objects.create(brand=brand, module="website", status="failed", error_message="HTTP 500")
    ResearchItem.objects.create(brand=brand, module="competitors", status="running")

    items = status_of(alice_api, brand)["items"]

    assert [i["module"] for i in items] == ORDER
    assert items[0]["status"] == "running" and items[0]["updated_at"]
    assert (items[5]["status"], items[5]["error_message"]) == ("failed", "HTTP 500")


def test_social_readiness_follows_the_linked_team(alice_api, alice):
    brand = BrandFactory(owner=alice)
    older = BrandKitFactory(brand=brand)
    newest = BrandKitFactory(brand=brand)
    assert status_of(alice_api, brand)["social_readiness"] == {"state": "pending", "kit_id": str(newest.id)}

    team = make_team(alice)
    alice_api.post(f"/api/v1/brand-kits/{older.id}/link-team/{team.id}")
    assert status_of(alice_api, brand)["social_readiness"] == {"state": "needs_connection", "kit_id": str(older.id)}

    for unusable in ([{}], [{"platform": "instagram"}], [{"account_id": "123"}], [{"platform": "", "id": " "}], ["x"]):
        team.connected_accounts = unusable
        team.save()
        assert status_of(alice_api, brand)["social_readiness"]["state"] == "needs_connection", unusable

    team.connected_accounts = [{}, {"platform": "instagram", "account_id": "123"}]
    team.save()
    assert status_of(alice_api, brand)["social_readiness"] == {"state": "ready", "kit_id": str(older.id)}


def test_another_users_brand_is_404(bob_api, alice):
    brand = BrandFactory(owner=alice)

    assert bob_api.get(f"/api/v1/brands/{brand.id}/research-status").status_code == 404


def test_api_key_is_403(alice_key_api, alice):
    brand = BrandFactory(owner=alice)

    response = alice_key_api.get(f"/api/v1/brands/{brand.id}/research-status")

    assert response.status_code == 403
    assert response.json()["code"] == "api_key_not_allowed"
