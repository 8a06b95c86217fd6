"""Audits that are not lost (docs/decisions.md#audit-sweep): the sweep queues a lost audit again a bounded number
of times, then fails it with the reason; the owner can run an audit again."""

from __future__ import annotations

import uuid
from datetime import timedelta

import pytest
from django.utils import timezone

from brands.models import Artifact, ResearchItem
from brands.services.research import audits_requeue_lost
from tests.brands.factories import BrandFactory
from tests.brands.test_link_team import broker_down  # noqa: F401 - a fixture

pytestmark = pytest.mark.django_db


@pytest.fixture
def brand(alice):
    return BrandFactory(owner=alice, name="Acme", domain="acme.example")


def item(brand, *, status, minutes_ago, attempts=1):
    at = timezone.now() - timedelta(minutes=minutes_ago)
    return ResearchItem.objects.create(
        brand=brand,
        module="brand_classification",
        status=status,
        attempt_id=uuid.uuid4(),
        attempts=attempts,
        queued_at=at,
        started_at=at if status == "running" else None,
    )


@pytest.mark.parametrize(
    ("status", "minutes_ago", "attempts", "after", "counts"),
    [
        # Lost in the queue: queued again, and (eager in tests) it runs to the end this time.
        ("queued", 31, 1, ("completed", 2), {"requeued": 1, "sent": 1, "failed": 0}),
        # A worker died mid-run: past the hard time limit plus the stale time, it is queued again.
        ("running", 31 + 60, 2, ("completed", 3), {"requeued": 1, "sent": 1, "failed": 0}),
        # Its attempts are used up: failed, with the reason.
        ("queued", 31, 3, ("failed", 3), {"requeued": 0, "sent": 0, "failed": 1}),
        # Not lost yet: left alone.
        ("queued", 5, 1, ("queued", 1), {"requeued": 0, "sent": 0, "failed": 0}),
        ("running", 20, 1, ("running", 1), {"requeued": 0, "sent": 0, "failed": 0}),
        ("completed", 600, 1, ("completed", 1), {"requeued": 0, "sent": 0, "failed": 0}),
    ],
)
def test_the_sweep(settings, brand, status, minutes_ago, attempts, after, counts):
    settings.RESEARCH_AUDIT_STALE_SECONDS = 30 * 60
    settings.RESEARCH_AUDIT_MAX_ATTEMPTS = 3
    settings.CELERY_TASK_TIME_LIMIT = 60 * 60
    lost = item(brand, status=status, minutes_ago=minutes_ago, attempts=attempts)

    assert audits_requeue_lost() == counts

    lost.refresh_from_db()
    assert (lost.status, lost.attempts) == after
    if after[0] == "failed":
        assert lost.error_message == "The audit was lost 3 times (queue or worker); run it again."
    assert Artifact.objects.filter(brand=brand).exists() is (after[0] == "completed" and status != "completed")


def url(brand, module):
    return f"/api/v1/brands/{brand.id}/research/{module}/run"


def test_the_owner_runs_an_audit_again(alice_api, brand):
    item(brand, status="failed", minutes_ago=60)

    response = alice_api.post(url(brand, "brand_classification"))

    assert response.status_code == 202, response.content
    assert response.json()["module"] == "brand_classification"
    assert response.json()["status"] == "queued"
    assert ResearchItem.objects.get(brand=brand).attempts == 1


@pytest.mark.parametrize(
    ("status", "module", "expected"),
    [("queued", "brand_classification", 409), ("running", "brand_classification", 409), (None, "bogus", 404)],
)
def test_running_again_is_refused(alice_api, brand, status, module, expected):
    if status:
        item(brand, status=status, minutes_ago=1)

    response = alice_api.post(url(brand, module))

    assert response.status_code == expected, response.content
    assert response.json()["code"] == {409: "invalid_state", 404: "not_found"}[expected]


def test_another_owners_brand_is_404(bob_api, brand):
    assert bob_api.post(url(brand, "competitors")).status_code == 404


@pytest.mark.django_db(transaction=True)
def test_running_again_with_the_queue_down_says_so_and_changes_nothing(alice_api, brand, broker_down):  # noqa: F811
    item(brand, status="failed", minutes_ago=60)

    response = alice_api.post(url(brand, "brand_classification"))

    assert response.status_code == 503, response.content
    assert response.json()["code"] == "provider_unavailable"
    assert ResearchItem.objects.get(brand=brand).status == "failed"
