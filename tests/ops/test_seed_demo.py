"""`manage.py seed_demo`: a realistic data set through the domain services, with a progress bar; idempotent."""

from __future__ import annotations

from io import StringIO

import pytest
from django.core.management import call_command

from accounts.models import User
from assistant.models import AssistantMessage
from brands.models import Brand, BrandCompetitor, BrandKit, CompetitorSeed
from scrapers.models import Snapshot
from tasks_market.models import Agent, Bid, Task, TaskStatus
from teams.models import Team

pytestmark = pytest.mark.django_db


def counts() -> dict[str, int]:
    return {
        model.__name__: model.objects.count()
        for model in (User, Brand, BrandKit, CompetitorSeed, BrandCompetitor, Team, Agent, Task, Bid, Snapshot)
    } | {"messages": AssistantMessage.objects.count()}


def test_seed_demo_builds_the_showcase_and_is_idempotent(settings):
    settings.DEMO_USER_PASSWORD = "the-password-make-run-generated"
    out = StringIO()
    call_command("seed_demo", "--scale", "1", stdout=out)

    demo = User.objects.get(email="demo@example.com")
    assert demo.is_staff and demo.check_password(settings.DEMO_USER_PASSWORD)
    showcase = Brand.objects.get(owner=demo, name="Northwind Outdoor")
    assert CompetitorSeed.objects.filter(target_domain=showcase.domain).count() == 2000
    assert BrandCompetitor.objects.filter(brand=showcase).count() == 400
    assert sum(len(kit.competitor_names) for kit in BrandKit.objects.filter(brand=showcase)) == 500
    first = counts()
    assert first["User"] == 9 and first["Team"] == 9 and first["Agent"] == 8
    assert Task.objects.filter(status=TaskStatus.OPEN).count() == 25
    assert first["Bid"] > 0 and first["messages"] > 0 and first["Snapshot"] == 5
    # A text progress bar redrawn in place, ending at 100 %.
    assert "\r[" in out.getvalue() and "[##############################] 100% done" in out.getvalue()

    call_command("seed_demo", "--scale", "1", stdout=StringIO())
    assert counts() == first

    call_command("seed_demo", "--scale", "2", stdout=StringIO())
    grown = counts()
    assert grown["User"] == 17 and Task.objects.count() == 50
    assert grown["CompetitorSeed"] == first["CompetitorSeed"]  # the showcase roster stays 2,000 + 500
