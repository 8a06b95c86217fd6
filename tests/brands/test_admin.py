from __future__ import annotations

import pytest

from brands.models import Artifact, BrandCompetitor, Publication, TrackedGroup, TrackedGroupMember
from tests.brands.factories import AdvertiserFactory, BrandFactory, BrandKitFactory, CompetitorSeedFactory

pytestmark = pytest.mark.django_db


@pytest.fixture
def objects(alice):
    brand = BrandFactory(owner=alice, domain="acme.example")
    seed = CompetitorSeedFactory()
    group = TrackedGroup.objects.create(brand=brand, name="Rivals", shared_modules=["seo"])
    TrackedGroupMember.objects.create(group=group, advertiser=AdvertiserFactory())
    return {
        "brand": brand,
        "brandkit": BrandKitFactory(brand=brand),
        "competitorseed": seed,
        "brandcompetitor": BrandCompetitor.objects.create(brand=brand, seed=seed, name=seed.name, is_starred=True),
        "trackedgroup": group,
        "artifact": Artifact.objects.create(brand=brand, module="seo", title="SEO"),
        "publication": Publication.objects.create(
            brand=brand,
            creative_id="00000000-0000-0000-0000-000000000001",
            action="social_publish",
            platform="instagram",
            payload={},
            payload_hash="0" * 64,
            destination_id="d",
            preview={},
            expires_at="2030-01-01T00:00:00Z",
        ),
    }


@pytest.mark.parametrize(
    "model", ["brand", "brandkit", "competitorseed", "brandcompetitor", "trackedgroup", "artifact", "publication"]
)
def test_changelist_search_filter_and_change_pages_render(admin_client, objects, model):
    base = f"/admin/brands/{model}/"

    assert admin_client.get(base, secure=True).status_code == 200
    assert admin_client.get(base, {"q": "acme"}, secure=True).status_code == 200
    assert admin_client.get(f"{base}{objects[model].pk}/change/", secure=True).status_code == 200


def test_filters_render(admin_client, objects):
    for url in (
        "/admin/brands/competitorseed/?origin__exact=public",
        "/admin/brands/brandcompetitor/?is_starred__exact=1&removed__exact=0",
        "/admin/brands/publication/?status__exact=preflight&platform__exact=instagram",
        "/admin/brands/artifact/?module__exact=seo",
        "/admin/brands/researchitem/",
        "/admin/brands/advertiser/",
        "/admin/brands/localpublishedpost/",
    ):
        assert admin_client.get(url, secure=True).status_code == 200, url


def test_the_cancel_action_goes_through_the_service(admin_client, objects):
    publication = objects["publication"]

    response = admin_client.post(
        "/admin/brands/publication/",
        {"action": "cancel", "_selected_action": [str(publication.pk)]},
        secure=True,
    )

    assert response.status_code == 302
    publication.refresh_from_db()
    assert (publication.status, publication.phase) == ("cancelled", "cancelled_by_user")
