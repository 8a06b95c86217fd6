"""Supervised teams: a confirmed publication waits for the brand owner's approval and does not expire while it
waits; autonomous teams publish directly (docs/decisions.md#publication-approval)."""

from __future__ import annotations

import uuid
from datetime import timedelta

import pytest
from django.utils import timezone

from brands.models import Publication
from brands.services.publications import publication_process, publications_expire
from tests.brands.factories import BrandFactory, BrandKitFactory, make_team

pytestmark = pytest.mark.django_db


@pytest.fixture
def brand(alice):
    return BrandFactory(owner=alice)


def confirm(client, brand):
    created = client.post(
        f"/api/v1/brands/{brand.id}/publications",
        {
            "creative_id": str(uuid.uuid4()),
            "action": "social_publish",
            "platform": "facebook",
            "destination_id": "page-1",
            "preview": {"copy": {"caption": "Hello"}},
        },
    )
    assert created.status_code == 201, created.content
    response = client.post(f"/api/v1/publications/{created.json()['id']}/confirm")
    assert response.status_code == 200, response.content
    return response.json()


@pytest.mark.parametrize(("mode", "phase"), [("supervised", "awaiting_approval"), ("autonomous", "waiting_for_worker")])
def test_confirm_waits_for_approval_only_in_supervised_mode(alice, alice_api, brand, mode, phase):
    BrandKitFactory(brand=brand, team=make_team(alice, operation_mode=mode))

    publication = confirm(alice_api, brand)

    assert (publication["status"], publication["phase"]) == ("queued", phase)
    # A worker message that arrives anyway does not publish what waits for approval.
    assert (publication_process(publication_id=publication["id"]) is None) is (mode == "supervised")


def test_approve_sends_it_and_it_never_expires_while_waiting(alice, alice_api, bob_api, brand):
    BrandKitFactory(brand=brand, team=make_team(alice, operation_mode="supervised"))
    publication = confirm(alice_api, brand)
    Publication.objects.filter(id=publication["id"]).update(expires_at=timezone.now() - timedelta(days=3))

    assert publications_expire() == 0
    assert bob_api.post(f"/api/v1/publications/{publication['id']}/approve").status_code == 404

    approved = alice_api.post(f"/api/v1/publications/{publication['id']}/approve")

    assert approved.status_code == 200, approved.content
    body = approved.json()
    assert (body["status"], body["phase"]) == ("queued", "waiting_for_worker")
    assert timezone.datetime.fromisoformat(body["expires_at"]) > timezone.now()
    assert alice_api.post(f"/api/v1/publications/{publication['id']}/approve").json()["phase"] == "waiting_for_worker"
    assert publication_process(publication_id=publication["id"]) == "succeeded"
    again = alice_api.post(f"/api/v1/publications/{publication['id']}/approve")
    assert (again.status_code, again.json()["code"]) == (409, "invalid_state")
