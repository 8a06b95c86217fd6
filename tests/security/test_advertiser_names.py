"""Advertisers are shared by domain, but the name one user types for one is theirs.

User A names domain X "SCAM - do not buy"; user B names the same domain "Legit Brand". Each sees
their own name, and a third party who adds X by id (or by domain without a name) sees neither.
"""

from __future__ import annotations

import pytest

from brands.models import Advertiser
from tests.brands.factories import BrandFactory

pytestmark = pytest.mark.django_db

DOMAIN = "shared-advertiser.example"


def _group(client, brand) -> str:
    response = client.post(f"/api/v1/brands/{brand.id}/brand-intelligence/tracked-groups", {"name": "Watch"})
    assert response.status_code == 201, response.content
    return response.json()["id"]


def _add(client, brand, group_id, body) -> dict:
    url = f"/api/v1/brands/{brand.id}/brand-intelligence/tracked-groups/{group_id}/members"
    response = client.post(url, body)
    assert response.status_code == 200, response.content
    return response.json()


def _names(group: dict) -> dict[str, str]:
    return {m["domain"]: m["name"] for m in group["members"]}


def test_what_one_user_types_never_changes_what_another_sees(alice_api, bob_api, alice, bob):
    alice_brand, bob_brand = BrandFactory(owner=alice), BrandFactory(owner=bob)
    alice_group, bob_group = _group(alice_api, alice_brand), _group(bob_api, bob_brand)

    _add(alice_api, alice_brand, alice_group, {"advertisers": [{"name": "SCAM - do not buy", "domain": DOMAIN}]})
    added = _add(bob_api, bob_brand, bob_group, {"advertisers": [{"name": "Legit Brand", "domain": DOMAIN}]})

    assert _names(added) == {DOMAIN: "Legit Brand"}
    url = f"/api/v1/brands/{bob_brand.id}/brand-intelligence/tracked-groups/{bob_group}"
    assert _names(bob_api.get(url).json()) == {DOMAIN: "Legit Brand"}
    url = f"/api/v1/brands/{alice_brand.id}/brand-intelligence/tracked-groups/{alice_group}"
    assert _names(alice_api.get(url).json()) == {DOMAIN: "SCAM - do not buy"}
    assert Advertiser.objects.get(domain=DOMAIN).name == DOMAIN  # the shared row holds identity only


def test_adding_by_id_shows_no_other_users_name(alice_api, bob_api, alice, bob):
    alice_brand, bob_brand = BrandFactory(owner=alice), BrandFactory(owner=bob)
    added = _add(
        alice_api,
        alice_brand,
        _group(alice_api, alice_brand),
        {"advertisers": [{"name": "SCAM - do not buy", "domain": DOMAIN}]},
    )
    advertiser_id = added["advertiser_ids"][0]

    by_id = _add(bob_api, bob_brand, _group(bob_api, bob_brand), {"advertiser_ids": [advertiser_id]})
    unnamed = _add(bob_api, bob_brand, _group(bob_api, bob_brand), {"advertisers": [{"domain": DOMAIN}]})

    assert _names(by_id) == {DOMAIN: DOMAIN}
    assert _names(unnamed) == {DOMAIN: DOMAIN}


def test_a_manual_competitor_name_does_not_name_the_shared_advertiser(alice_api, bob_api, alice, bob):
    alice_brand, bob_brand = BrandFactory(owner=alice), BrandFactory(owner=bob)
    response = alice_api.post(
        f"/api/v1/brands/{alice_brand.id}/competitors", {"name": "SCAM - do not buy", "canonical_domain": DOMAIN}
    )
    assert response.status_code == 201, response.content

    added = _add(bob_api, bob_brand, _group(bob_api, bob_brand), {"advertisers": [{"domain": DOMAIN}]})

    assert _names(added) == {DOMAIN: DOMAIN}
