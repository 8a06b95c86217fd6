"""Link a kit to a team; the audits start after commit and never fail the call (docs/decisions.md#domain-rules)."""

from __future__ import annotations

import uuid

import pytest

from brands.models import Artifact, Brand, BrandKit, ResearchItem, ResearchStatus
from brands.services.research import audits_queue
from brands.tasks import run_audit
from config.celery_app import app
from teams.models import Team
from tests.brands.factories import BrandFactory, BrandKitFactory, CompetitorSeedFactory, make_team
from tests.brands.http_server import running_server

pytestmark = pytest.mark.django_db

PAGE = """<html><head><title>Acme running shoes</title>
<meta name="description" content="Running shoes and apparel for everyday athletes, shipped free.">
<style>body{color:#112233}</style></head>
<body><h1>Run further</h1><h2>Trail shoes</h2>
<a href="https://instagram.com/acme">Instagram</a></body></html>"""


def link(client, kit, team):
    return client.post(f"/api/v1/brand-kits/{kit.id}/link-team/{team.id}")


def statuses(brand) -> dict[str, str]:
    return dict(ResearchItem.objects.filter(brand=brand).values_list("module", "status"))


@pytest.fixture
def local_server():
    with running_server() as server:
        yield server


@pytest.fixture
def brand(alice):
    return BrandFactory(
        owner=alice,
        name="Acme Running",
        industry="sports",
        description="Running shoes and apparel sold online to everyday athletes, with free shipping.",
        domain="acme.example",
    )


@pytest.fixture
def kit(brand):
    return BrandKitFactory(brand=brand, competitor_names=["Globex", "Initech"], tagline="Run further")


def test_link_sets_the_team_and_answers_with_the_audits(
    alice_api, alice, brand, kit, django_capture_on_commit_callbacks
):
    team = make_team(alice, config={"audits": ["seo", "bogus", "competitors", 42]})

    with django_capture_on_commit_callbacks(execute=False) as callbacks:
        response = link(alice_api, kit, team)

    assert response.status_code == 200, response.content
    assert response.json() == {
        "kit_id": str(kit.id),
        "team_id": str(team.id),
        "brand_id": str(brand.id),
        "linked": True,
        "audits": ["brand_classification", "competitors", "seo"],  # unknown names are skipped
        "audits_not_started": [],
    }
    team.refresh_from_db()
    assert (team.brand_kit_id, team.brand_id, team.brand_name) == (kit.id, brand.id, "Acme Running")
    assert BrandKit.objects.get(id=kit.id).team_id == team.id
    # Queued with the link; sent only after commit, one task per audit.
    assert statuses(brand) == {"brand_classification": "queued", "competitors": "queued", "seo": "queued"}
    # One callback sends the three tasks (the others make the cached competitors roster stale).
    assert len([c for c in callbacks if "_stale" not in c.__qualname__]) == 1


@pytest.mark.parametrize("status", ["paused", "cancelled"])
def test_a_team_that_does_no_work_is_linked_but_starts_no_audit(
    alice_api, alice, brand, kit, status, django_capture_on_commit_callbacks
):
    team = make_team(alice, status=status, config={"audits": ["seo"]})

    with django_capture_on_commit_callbacks(execute=False):
        response = link(alice_api, kit, team)

    assert response.status_code == 200, response.content
    assert (response.json()["linked"], response.json()["audits"]) == (True, [])
    assert BrandKit.objects.get(id=kit.id).team_id == team.id
    assert statuses(brand) == {}


def test_with_a_running_worker_the_audits_complete_and_write_artifacts(
    alice_api, alice, brand, kit, django_capture_on_commit_callbacks
):
    CompetitorSeedFactory(name="Globex", target_domain="acme.example", canonical_domain="globex.example")
    team = make_team(alice, config={"audits": ["seo", "organic_social", "paid_media"]})

    with django_capture_on_commit_callbacks(execute=True):
        response = link(alice_api, kit, team)

    assert response.status_code == 200
    assert statuses(brand) == {
        "brand_classification": "completed",
        "competitors": "completed",
        "seo": "completed",
        "organic_social": "completed",
        "paid_media": "completed",
    }
    artifacts = alice_api.get(f"/api/v1/brands/{brand.id}/brand-intelligence/artifacts").json()
    assert artifacts["total"] == 5
    assert {a["module"] for a in artifacts["items"]} == {
        "brand_classification",
        "competitors",
        "seo",
        "organic_social",
        "paid_media",
    }
    classification = Brand.objects.get(id=brand.id).brand_classification
    assert classification["primary_industry"] == "sports_outdoors"
    assert "apparel_fashion" in classification["industries"]
    assert "ecommerce" in classification["business_models"]
    assert classification["version"] and classification["source"] == "keyword_rules"
    assert classification["classified_at"]
    research = alice_api.get(f"/api/v1/brands/{brand.id}/research-status").json()
    assert [i["status"] for i in research["items"]] == [
        "completed",
        "completed",
        "completed",
        "completed",
        "completed",
        "not_started",
    ]


def test_the_website_audit_reads_the_page(
    alice_api, alice, brand, kit, local_server, django_capture_on_commit_callbacks
):
    Brand.objects.filter(id=brand.id).update(website_url=local_server.route("/", PAGE))
    team = make_team(alice)

    with django_capture_on_commit_callbacks(execute=True):
        response = link(alice_api, kit, team)

    assert "website" in response.json()["audits"]
    assert statuses(brand)["website"] == "completed"
    artifact = Artifact.objects.get(brand=brand, module="website")
    detail = alice_api.get(f"/api/v1/brands/{brand.id}/brand-intelligence/artifacts/{artifact.id}").json()
    assert detail["data"]["facts"]["title"] == "Acme running shoes"
    assert detail["data"]["facts"]["social_links"] == {"instagram": "https://instagram.com/acme"}


def test_a_website_that_cannot_be_read_fails_the_audit_not_the_call(
    alice_api,
    alice,
    brand,
    kit,
    local_server,
    django_capture_on_commit_callbacks,
):
    Brand.objects.filter(id=brand.id).update(website_url=local_server.route("/gone", "no", status=404))
    team = make_team(alice)

    with django_capture_on_commit_callbacks(execute=True):
        response = link(alice_api, kit, team)

    assert response.status_code == 200
    item = ResearchItem.objects.get(brand=brand, module="website")
    assert (item.status, item.error_message) == ("failed", "The website answered HTTP 404.")
    assert Artifact.objects.filter(brand=brand, module="website", data__status="failed").exists()


def test_a_private_website_url_is_refused_when_private_urls_are_off(
    alice_api, alice, brand, kit, settings, django_capture_on_commit_callbacks
):
    settings.OUTBOUND_ALLOW_PRIVATE_URLS = False
    Brand.objects.filter(id=brand.id).update(website_url="https://127.0.0.1/")

    with django_capture_on_commit_callbacks(execute=True):
        response = link(alice_api, kit, make_team(alice))

    assert response.status_code == 200
    item = ResearchItem.objects.get(brand=brand, module="website")
    assert item.status == "failed"
    assert "may not be fetched" in item.error_message


@pytest.fixture
def broker_down(settings):
    """Celery not eager and its broker unreachable, as when the broker is stopped."""
    saved = {
        key: app.conf[key]
        for key in (
            "task_always_eager",
            "broker_url",
            "broker_connection_timeout",
            "broker_connection_max_retries",
            "task_publish_retry",
        )
    }
    settings.CELERY_TASK_ALWAYS_EAGER = False
    app.conf.update(
        task_always_eager=False,
        broker_url="redis://127.0.0.1:9/0",
        broker_connection_timeout=1,
        broker_connection_max_retries=1,
        task_publish_retry=False,
    )
    app._pool = None
    app.amqp._producer_pool = None
    yield
    app.conf.update(saved)
    app._pool = None
    app.amqp._producer_pool = None


@pytest.mark.django_db(transaction=True)
def test_link_returns_200_even_with_the_broker_stopped(alice_api, alice, brand, kit, broker_down):
    ResearchItem.objects.create(brand=brand, module="competitors", status="completed")
    team = make_team(alice, config={"audits": ["paid_media"]})

    response = link(alice_api, kit, team)

    assert response.status_code == 200, response.content
    assert response.json()["linked"] is True
    # The answer says so: every audit it names was not started (docs/decisions.md#audit-sweep).
    assert response.json()["audits_not_started"] == response.json()["audits"] != []
    team.refresh_from_db()
    assert team.brand_kit_id == kit.id
    # Nothing was started: every item is back where it was, none is left queued or running.
    assert statuses(brand) == {
        "competitors": "completed",
        "brand_classification": "not_started",
        "paid_media": "not_started",
    }
    assert not ResearchItem.objects.filter(status__in=["queued", "running"]).exists()
    assert not Artifact.objects.exists()


def test_running_an_audit_twice_does_it_once(brand, django_capture_on_commit_callbacks):
    with django_capture_on_commit_callbacks(execute=False) as callbacks:
        audits_queue(brand=brand, modules=["brand_classification"])
    item = ResearchItem.objects.get(brand=brand)
    assert len(callbacks) == 1

    first = run_audit.apply(args=[str(brand.id), "brand_classification", str(item.attempt_id)]).get()
    second = run_audit.apply(args=[str(brand.id), "brand_classification", str(item.attempt_id)]).get()

    assert (first, second) == ("completed", None)
    assert Artifact.objects.filter(brand=brand).count() == 1


def test_a_superseded_attempt_does_nothing(brand):
    audits_queue(brand=brand, modules=["brand_classification"])
    old_attempt = ResearchItem.objects.get(brand=brand).attempt_id
    audits_queue(brand=brand, modules=["brand_classification"])

    assert run_audit.apply(args=[str(brand.id), "brand_classification", str(old_attempt)]).get() is None
    assert ResearchItem.objects.get(brand=brand).status == ResearchStatus.QUEUED


def test_relinking_a_kit_moves_it_from_its_old_team(alice_api, alice, kit):
    old, new = make_team(alice), make_team(alice)
    link(alice_api, kit, old)

    link(alice_api, kit, new)

    old.refresh_from_db()
    new.refresh_from_db()
    assert (old.brand_kit_id, old.brand_id, old.brand_name) == (None, None, "")
    assert new.brand_kit_id == kit.id


def test_a_team_keeps_one_kit(alice_api, alice, brand, kit):
    other_kit = BrandKitFactory(brand=brand)
    team = make_team(alice)
    link(alice_api, kit, team)

    link(alice_api, other_kit, team)

    assert BrandKit.objects.get(id=kit.id).team_id is None
    assert Team.objects.get(id=team.id).brand_kit_id == other_kit.id


def test_both_kit_and_team_must_be_mine(alice_api, bob_api, alice, bob, kit):
    my_team = make_team(alice)
    bobs_team = make_team(bob)

    assert link(alice_api, kit, bobs_team).status_code == 404
    assert link(bob_api, kit, bobs_team).status_code == 404
    assert link(bob_api, kit, my_team).status_code == 404
    assert alice_api.post(f"/api/v1/brand-kits/{kit.id}/link-team/{uuid.uuid4()}").status_code == 404
    assert BrandKit.objects.get(id=kit.id).team_id is None
    assert Team.objects.get(id=bobs_team.id).brand_kit_id is None
    assert not ResearchItem.objects.exists()


def test_api_key_is_refused(alice_key_api, alice, kit):
    response = link(alice_key_api, kit, make_team(alice))

    assert response.status_code == 403
    assert response.json()["code"] == "api_key_not_allowed"


def test_the_seo_audit_checks_the_page_and_survives_an_unreadable_one(
    alice_api, alice, brand, kit, local_server, django_capture_on_commit_callbacks
):
    Brand.objects.filter(id=brand.id).update(website_url=local_server.route("/", PAGE))
    with django_capture_on_commit_callbacks(execute=True):
        link(alice_api, kit, make_team(alice, config={"audits": ["seo"]}))
    seo = Artifact.objects.get(brand=brand, module="seo").data

    assert seo["score"] == 100
    assert {c["check"] for c in seo["checks"]} >= {"title_present", "exactly_one_h1"}
    assert "running" in seo["keywords_on_page"]

    Brand.objects.filter(id=brand.id).update(website_url=local_server.route("/down", "x", status=500))
    with django_capture_on_commit_callbacks(execute=True):
        link(alice_api, kit, make_team(alice, config={"audits": ["seo"]}))

    assert statuses(brand)["seo"] == "completed"
    latest = Artifact.objects.filter(brand=brand, module="seo").order_by("-created_at").first().data
    assert latest["page_error"] == "The website answered HTTP 500."
    assert latest["keywords"]
