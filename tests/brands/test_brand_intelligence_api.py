"""Tracked groups (module forking, stale writes) and artifacts."""

from __future__ import annotations

import uuid

import pytest

from brands.models import Advertiser, Artifact, TrackedGroup, TrackedGroupFork, TrackedGroupMember
from tests.brands.factories import AdvertiserFactory, BrandFactory
from tests.brands.querycount import assert_constant_queries

pytestmark = pytest.mark.django_db


@pytest.fixture
def brand(alice):
    return BrandFactory(owner=alice)


def groups_url(brand, suffix=""):
    return f"/api/v1/brands/{brand.id}/brand-intelligence/tracked-groups{suffix}"


def create_group(client, brand, **body):
    response = client.post(groups_url(brand), {"name": "Rivals", **body})
    assert response.status_code == 201, response.content
    return response.json()


def names(group: dict) -> list[str]:
    return [m["name"] for m in group["members"]]


# --- Create, members, advertisers ----------------------------------------------------------------------


def test_create_with_members_by_id_and_by_domain(alice_api, brand):
    known = AdvertiserFactory(name="Globex", domain="globex.example")

    group = create_group(
        alice_api,
        brand,
        shared_modules=["seo", "paid_media"],
        advertiser_ids=[str(known.id)],
        advertisers=[{"name": "Initech", "domain": "https://www.initech.example/about"}],
    )

    assert group["shared_modules"] == ["seo", "paid_media"]
    assert group["module"] is None and group["forked"] is False and group["system_slug"] == ""
    assert names(group) == ["Globex", "Initech"]
    assert group["members"][1]["domain"] == "initech.example"
    assert group["advertiser_ids"] == [m["advertiser_id"] for m in group["members"]]


def test_advertisers_are_found_by_domain_not_duplicated(alice_api, brand):
    known = AdvertiserFactory(name="Globex", domain="globex.example")

    group = create_group(alice_api, brand, advertisers=[{"name": "Other name", "domain": "GLOBEX.example"}])

    assert group["advertiser_ids"] == [str(known.id)]
    assert names(group) == ["Other name"]  # the name typed is this group's; the shared row keeps its own
    assert list(Advertiser.objects.filter(domain="globex.example").values_list("name", flat=True)) == ["Globex"]


def test_without_a_typed_name_a_member_shows_the_advertisers_own(alice_api, brand):
    AdvertiserFactory(name="Globex", domain="globex.example")

    group = create_group(alice_api, brand, advertisers=[{"domain": "globex.example"}])

    assert names(group) == ["Globex"]


def test_unknown_advertiser_ids_are_422_and_nothing_is_created(alice_api, brand):
    response = alice_api.post(groups_url(brand), {"name": "Rivals", "advertiser_ids": [str(uuid.uuid4())]})

    assert response.status_code == 422
    assert response.json()["detail"][0]["loc"] == ["body", "advertiser_ids"]
    assert not TrackedGroup.objects.exists()


def test_unknown_module_names_are_422(alice_api, brand):
    response = alice_api.post(groups_url(brand), {"name": "Rivals", "shared_modules": ["tiktok"]})

    assert response.status_code == 422
    assert response.json()["detail"][0]["loc"] == ["body", "shared_modules", 0]


def test_add_members_needs_someone(alice_api, brand):
    group = create_group(alice_api, brand)

    response = alice_api.post(groups_url(brand, f"/{group['id']}/members"), {})

    assert response.status_code == 422


# --- Forking ------------------------------------------------------------------------------------------------


def test_removing_seo_forks_it_with_todays_members(alice_api, brand):
    a, b, c = AdvertiserFactory(name="A"), AdvertiserFactory(name="B"), AdvertiserFactory(name="C")
    group = create_group(alice_api, brand, shared_modules=["seo", "paid_media"], advertiser_ids=[str(a.id), str(b.id)])
    detail = groups_url(brand, f"/{group['id']}")

    patched = alice_api.patch(f"{detail}?module=seo", {"shared_modules": ["paid_media"]})

    assert patched.status_code == 200, patched.content
    assert patched.json()["module"] == "seo"
    assert patched.json()["forked"] is True
    assert patched.json()["forked_modules"] == ["seo"]
    assert names(patched.json()) == ["A", "B"]

    added = alice_api.post(f"{detail}/members", {"advertiser_ids": [str(c.id)]})
    assert added.status_code == 200
    assert names(added.json()) == ["A", "B", "C"]

    seo = alice_api.get(detail, {"module": "seo"}).json()
    assert names(seo) == ["A", "B"]  # later additions do not reach the fork
    assert seo["forked"] is True
    paid = alice_api.get(detail, {"module": "paid_media"}).json()
    assert names(paid) == ["A", "B", "C"]
    assert paid["forked"] is False


def test_a_patch_that_forks_a_module_says_forked_without_a_module_query(alice_api, brand):
    """`forked` becomes true when a module is removed, whichever view the PATCH asks for; the shared view
    says so as long as any module is forked, and false again once none is."""
    group = create_group(alice_api, brand, shared_modules=["seo", "paid_media"])
    detail = groups_url(brand, f"/{group['id']}")

    patched = alice_api.patch(detail, {"shared_modules": ["paid_media"]}).json()
    shared = alice_api.get(detail).json()
    rejoined = alice_api.patch(detail, {"shared_modules": ["paid_media", "seo"]}).json()

    assert (patched["module"], patched["forked"], patched["forked_modules"]) == (None, True, ["seo"])
    assert (shared["forked"], shared["forked_modules"]) == (True, ["seo"])
    assert (rejoined["forked"], rejoined["forked_modules"]) == (False, [])


def test_adding_a_module_back_ends_its_fork(alice_api, brand):
    a, c = AdvertiserFactory(name="A"), AdvertiserFactory(name="C")
    group = create_group(alice_api, brand, shared_modules=["seo"], advertiser_ids=[str(a.id)])
    detail = groups_url(brand, f"/{group['id']}")
    alice_api.patch(detail, {"shared_modules": []})
    alice_api.post(f"{detail}/members", {"advertiser_ids": [str(c.id)]})

    back = alice_api.patch(f"{detail}?module=seo", {"shared_modules": ["seo"]}).json()

    assert back["forked"] is False
    assert names(back) == ["A", "C"]
    assert not TrackedGroupFork.objects.exists()
    assert not TrackedGroupMember.objects.filter(module="seo").exists()


def test_a_module_the_group_does_not_extend_to_sees_nobody(alice_api, brand):
    a = AdvertiserFactory(name="A")
    group = create_group(alice_api, brand, shared_modules=["seo"], advertiser_ids=[str(a.id)])

    other = alice_api.get(groups_url(brand, f"/{group['id']}"), {"module": "website"}).json()

    assert other["members"] == [] and other["forked"] is False


def test_an_unknown_module_query_is_422(alice_api, brand):
    group = create_group(alice_api, brand)

    response = alice_api.get(groups_url(brand, f"/{group['id']}"), {"module": "tv"})

    assert response.status_code == 422
    assert response.json()["detail"][0]["loc"] == ["query", "module"]


# --- Stale writes ------------------------------------------------------------------------------------------------


def test_a_stale_expected_updated_at_is_409_and_changes_nothing(alice_api, brand):
    a = AdvertiserFactory(name="A")
    group = create_group(alice_api, brand, shared_modules=["seo", "paid_media"], advertiser_ids=[str(a.id)])
    detail = groups_url(brand, f"/{group['id']}")
    read_at = group["updated_at"]
    alice_api.patch(detail, {"name": "Renamed meanwhile"})

    response = alice_api.patch(
        detail, {"name": "Mine", "shared_modules": ["paid_media"], "expected_updated_at": read_at}
    )

    assert response.status_code == 409
    assert response.json()["code"] == "stale_write"
    stored = TrackedGroup.objects.get(id=group["id"])
    assert stored.name == "Renamed meanwhile"
    assert stored.shared_modules == ["seo", "paid_media"]
    assert not TrackedGroupFork.objects.exists()


def test_a_current_expected_updated_at_is_accepted(alice_api, brand):
    group = create_group(alice_api, brand)
    detail = groups_url(brand, f"/{group['id']}")
    current = alice_api.get(detail).json()["updated_at"]

    response = alice_api.patch(detail, {"name": "Mine", "expected_updated_at": current})

    assert response.status_code == 200, response.content
    assert response.json()["name"] == "Mine"
    assert response.json()["updated_at"] != current


def test_adding_members_counts_as_a_change(alice_api, brand):
    group = create_group(alice_api, brand)
    detail = groups_url(brand, f"/{group['id']}")
    alice_api.post(f"{detail}/members", {"advertisers": [{"domain": "new.example"}]})

    response = alice_api.patch(detail, {"name": "Mine", "expected_updated_at": group["updated_at"]})

    assert response.status_code == 409


def test_patch_reports_query_and_body_problems_together(alice_api, brand):
    group = create_group(alice_api, brand)

    response = alice_api.patch(groups_url(brand, f"/{group['id']}?module=tv"), {"expected_updated_at": "soon"})

    assert response.status_code == 422
    assert [e["loc"] for e in response.json()["detail"]] == [["query", "module"], ["body", "expected_updated_at"]]


# --- Lists, ownership ----------------------------------------------------------------------------------------


def test_list_is_newest_first_with_constant_queries(alice_api, brand):
    def add_group():
        group = TrackedGroup.objects.create(brand=brand, name="G", shared_modules=["seo"])
        for advertiser in (AdvertiserFactory(), AdvertiserFactory()):
            TrackedGroupMember.objects.create(group=group, advertiser=advertiser)
        TrackedGroupFork.objects.create(group=group, module="website")

    assert_constant_queries(alice_api, groups_url(brand), add_group)
    body = alice_api.get(groups_url(brand)).json()
    assert body["total"] == 25 and len(body["items"]) == 20 and body["has_more"] is True
    created = [g["created_at"] for g in body["items"]]
    assert created == sorted(created, reverse=True)


def test_another_users_groups_are_404(alice_api, bob_api, brand):
    group = create_group(alice_api, brand)
    detail = groups_url(brand, f"/{group['id']}")

    assert bob_api.get(groups_url(brand)).status_code == 404
    assert bob_api.post(groups_url(brand), {"name": "x"}).status_code == 404
    assert bob_api.get(detail).status_code == 404
    assert bob_api.patch(detail, {"name": "x"}).status_code == 404
    assert bob_api.post(f"{detail}/members", {"advertisers": [{"domain": "x.example"}]}).status_code == 404
    assert TrackedGroup.objects.get(id=group["id"]).name == "Rivals"


def test_a_group_of_another_brand_is_404(alice_api, alice, brand):
    group = create_group(alice_api, BrandFactory(owner=alice))

    assert alice_api.get(groups_url(brand, f"/{group['id']}")).status_code == 404


# --- Artifacts ---------------------------------------------------------------------------------------------------


def artifacts_url(brand, suffix=""):
    return f"/api/v1/brands/{brand.id}/brand-intelligence/artifacts{suffix}"


def test_artifacts_are_listed_newest_first_and_filtered_by_module(alice_api, brand):
    older = Artifact.objects.create(brand=brand, module="seo", title="SEO", data={"keywords": []})
    newer = Artifact.objects.create(brand=brand, module="website", title="Site", data={"facts": {}})

    listed = alice_api.get(artifacts_url(brand)).json()
    seo_only = alice_api.get(artifacts_url(brand), {"module": "seo"}).json()

    assert [a["id"] for a in listed["items"]] == [str(newer.id), str(older.id)]
    assert "data" not in listed["items"][0]
    assert [a["id"] for a in seo_only["items"]] == [str(older.id)]


def test_artifact_detail_is_the_whole_record(alice_api, brand):
    artifact = Artifact.objects.create(brand=brand, module="seo", title="SEO", data={"keywords": [{"term": "run"}]})

    body = alice_api.get(artifacts_url(brand, f"/{artifact.id}")).json()

    assert body["id"] == str(artifact.id)
    assert body["data"] == {"keywords": [{"term": "run"}]}
    assert body["module"] == "seo"


def test_artifacts_of_another_user_or_brand_are_404(alice_api, bob_api, alice, brand):
    artifact = Artifact.objects.create(brand=brand, module="seo", title="SEO")
    other_brand = BrandFactory(owner=alice)

    assert bob_api.get(artifacts_url(brand)).status_code == 404
    assert bob_api.get(artifacts_url(brand, f"/{artifact.id}")).status_code == 404
    assert alice_api.get(artifacts_url(other_brand, f"/{artifact.id}")).status_code == 404


def test_artifact_list_uses_a_constant_number_of_queries(alice_api, brand):
    assert_constant_queries(
        alice_api, artifacts_url(brand), lambda: Artifact.objects.create(brand=brand, module="seo", title="SEO")
    )


def test_api_key_is_403(alice_key_api, brand):
    assert alice_key_api.get(groups_url(brand)).status_code == 403
    assert alice_key_api.get(artifacts_url(brand)).status_code == 403
