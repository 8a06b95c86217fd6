"""Recurring research (docs/decisions.md#team-cadence): the beat job queues the due audits of brands linked to a
working team with a cadence, competitor discovery included, and nothing for a paused team or an empty cadence."""

from __future__ import annotations

from datetime import timedelta

import pytest
from django.utils import timezone

from brands.models import ResearchItem
from brands.services.research import research_cadence_queue
from tests.brands.factories import BrandFactory, BrandKitFactory, make_team

pytestmark = pytest.mark.django_db


@pytest.fixture
def brand(alice):
    return BrandFactory(owner=alice, name="Acme", domain="acme.example")


@pytest.mark.parametrize(
    ("status", "cadence", "last_hours_ago", "queued"),
    [
        ("active", {"research_every_hours": 24}, None, {"brand_classification", "competitors", "seo"}),
        ("active", {"research_every_hours": 24}, 25, {"brand_classification", "competitors", "seo"}),
        ("active", {"research_every_hours": 24}, 2, set()),  # not due yet
        ("cancelling", {"research_every_hours": 24}, 25, {"brand_classification", "competitors", "seo"}),
        ("paused", {"research_every_hours": 24}, 25, set()),
        ("active", {}, 25, set()),  # no recurring research
        ("active", {"research_every_hours": "24"}, 25, set()),  # an admin's bad value is ignored
    ],
)
def test_due_audits_are_queued(
    alice, brand, status, cadence, last_hours_ago, queued, django_capture_on_commit_callbacks
):
    team = make_team(alice, status=status, orchestrator_cadence=cadence, config={"audits": ["seo"]})
    BrandKitFactory(brand=brand, team=team)
    if last_hours_ago is not None:
        at = timezone.now() - timedelta(hours=last_hours_ago)
        for module in ("brand_classification", "competitors", "seo"):
            ResearchItem.objects.create(brand=brand, module=module, status="completed", queued_at=at)

    with django_capture_on_commit_callbacks(execute=False):
        research_cadence_queue()
        again = research_cadence_queue()  # what was just queued is not queued twice

    assert set(ResearchItem.objects.filter(brand=brand, status="queued").values_list("module", flat=True)) == queued
    assert again == {"brands": 0, "audits": 0}
