"""Races on real PostgreSQL: one writer wins, the others get a 409, nothing happens twice."""

from __future__ import annotations

import threading
import uuid

import pytest
from django.db import connection

from brands.models import LocalPublishedPost, Publication, TrackedGroup
from tests.brands.factories import BrandFactory
from tests.conftest import client_with_token, jwt_for

pytestmark = pytest.mark.django_db(transaction=True)

THREADS = 4


def race(request) -> list[int]:
    """Run `request()` in THREADS threads released together; their status codes."""
    barrier = threading.Barrier(THREADS)
    codes: list[int] = []

    def run():
        try:
            barrier.wait()
            codes.append(request())
        finally:
            connection.close()

    threads = [threading.Thread(target=run) for _ in range(THREADS)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    return sorted(codes)


def test_concurrent_confirms_publish_once(alice):
    brand = BrandFactory(owner=alice)
    token = jwt_for(alice)
    created = (
        client_with_token(token)
        .post(
            f"/api/v1/brands/{brand.id}/publications",
            {
                "creative_id": str(uuid.uuid4()),
                "action": "social_publish",
                "platform": "facebook",
                "destination_id": "page-1",
                "preview": {"media_url": "https://cdn.example/a.png", "content_type": "image/png"},
            },
        )
        .json()
    )

    codes = race(lambda: client_with_token(token).post(f"/api/v1/publications/{created['id']}/confirm").status_code)

    assert codes == [200] + [409] * (THREADS - 1)
    assert Publication.objects.get(id=created["id"]).status == "succeeded"
    assert LocalPublishedPost.objects.count() == 1


def test_concurrent_patches_with_the_same_expected_updated_at_one_wins(alice):
    brand = BrandFactory(owner=alice)
    group = TrackedGroup.objects.create(brand=brand, name="Rivals", shared_modules=["seo"])
    token = jwt_for(alice)
    url = f"/api/v1/brands/{brand.id}/brand-intelligence/tracked-groups/{group.id}"
    read_at = client_with_token(token).get(url).json()["updated_at"]

    codes = race(
        lambda: (
            client_with_token(token)
            .patch(url, {"name": f"by {threading.get_ident()}", "expected_updated_at": read_at})
            .status_code
        )
    )

    assert codes == [200] + [409] * (THREADS - 1)
