"""Publications: preflight → queued → processing → succeeded | failed | needs_attention; cancel; expiry."""

from __future__ import annotations

import hashlib
import json
import re
import uuid
from datetime import timedelta

import pytest
from django.utils import timezone

from brands.models import LocalPublishedPost, Publication
from brands.services.publications import publications_expire
from brands.tasks import expire_preflights, publish_publication, requeue_publications
from tests.brands.factories import BrandFactory
from tests.brands.http_server import running_server
from tests.brands.querycount import assert_constant_queries
from webhooks_app.models import WebhookEvent
from webhooks_app.services import webhook_subscription_create

pytestmark = pytest.mark.django_db

CREATIVE = uuid.UUID("2f1c9f8e-5d0a-4c3b-9b7e-1a2b3c4d5e6f")
SHA = "ab" * 32


@pytest.fixture
def brand(alice):
    return BrandFactory(owner=alice)


def body(**overrides):
    preview = {
        "placement": "feed",
        "kind": "image",
        "media_url": "https://cdn.example/creative.png",
        "media_sha256": SHA,
        "content_type": "image/png",
        "width": 1080,
        "height": 1080,
        "copy": {"caption": "Run further.", "headline": "New trail shoe"},
    }
    preview.update(overrides.pop("preview", {}))
    return {
        "creative_id": str(CREATIVE),
        "variant_index": 1,
        "action": "social_publish",
        "platform": "instagram",
        "destination_id": "ig-1789",
        "destination_label": "@acme",
        "preview": preview,
        **overrides,
    }


def create(client, brand, **overrides):
    response = client.post(f"/api/v1/brands/{brand.id}/publications", body(**overrides))
    assert response.status_code == 201, response.content
    return response.json()


def confirm(client, publication, capture):
    with capture(execute=True):
        response = client.post(f"/api/v1/publications/{publication['id']}/confirm")
    assert response.status_code == 200, response.content
    return Publication.objects.get(id=publication["id"])


# --- Preflight ----------------------------------------------------------------------------------------


def test_create_makes_a_preflight_with_its_payload_hash(alice_api, brand):
    before = timezone.now()
    publication = create(alice_api, brand)

    assert publication["status"] == "preflight"
    assert publication["phase"] == "awaiting_confirmation"
    assert publication["creative_id"] == str(CREATIVE)
    assert publication["variant_index"] == 1
    assert publication["preview"]["platform"] == "instagram"  # defaults to the publication's
    assert publication["preview"]["copy"]["primary_text"] == ""
    assert publication["confirmed_at"] is None and publication["remote_id"] is None
    stored = Publication.objects.get(id=publication["id"])
    canonical = json.dumps(stored.payload, sort_keys=True, separators=(",", ":"), ensure_ascii=False)
    assert publication["payload_hash"] == hashlib.sha256(canonical.encode()).hexdigest()
    assert stored.payload["preview"] == publication["preview"]
    expires_at = stored.expires_at
    assert before + timedelta(minutes=29) < expires_at <= timezone.now() + timedelta(minutes=30)


def test_the_hash_follows_the_payload(alice_api, brand):
    first = create(alice_api, brand)
    same = create(alice_api, brand)
    other = create(alice_api, brand, preview={"copy": {"caption": "Run faster."}})

    assert first["payload_hash"] == same["payload_hash"] != other["payload_hash"]


def test_the_preflight_warns_about_what_the_platform_will_say(alice_api, brand):
    publication = create(
        alice_api, brand, preview={"media_url": "", "copy": {"caption": "Shop", "link_url": "https://acme.example"}}
    )

    warnings = publication["warnings"]
    assert any(w.startswith("media_missing:") for w in warnings)
    assert "Links in Instagram captions are not clickable." in warnings


def test_preview_platform_must_match(alice_api, brand):
    response = alice_api.post(f"/api/v1/brands/{brand.id}/publications", body(preview={"platform": "facebook"}))

    assert response.status_code == 422
    assert not Publication.objects.exists()


@pytest.mark.parametrize(
    ("field", "value"), [("action", "tweet"), ("platform", "myspace"), ("creative_id", "nope"), ("variant_index", -1)]
)
def test_invalid_input_is_422(alice_api, brand, field, value):
    response = alice_api.post(f"/api/v1/brands/{brand.id}/publications", body(**{field: value}))

    assert response.status_code == 422
    assert response.json()["detail"][0]["loc"] == ["body", field]


# --- Confirm and publish -------------------------------------------------------------------------------------


def test_confirm_publishes_through_the_local_provider(alice_api, brand, django_capture_on_commit_callbacks):
    publication = create(alice_api, brand)

    stored = confirm(alice_api, publication, django_capture_on_commit_callbacks)

    assert stored.status == "succeeded"
    assert stored.phase == "simulated"  # the local provider posts nowhere, and says so
    assert stored.confirmed_at and stored.completed_at
    post = LocalPublishedPost.objects.get(publication=stored)
    assert stored.remote_id == post.remote_id
    assert stored.permalink == f"local://published/instagram/ig-1789/{post.remote_id}"
    assert post.payload_hash == stored.payload_hash
    listed = alice_api.get(f"/api/v1/brands/{brand.id}/publications").json()
    assert listed[0]["status"] == "succeeded" and listed[0]["remote_id"] == post.remote_id


def test_the_confirm_answer_is_the_queued_publication(alice_api, brand, django_capture_on_commit_callbacks):
    publication = create(alice_api, brand)

    with django_capture_on_commit_callbacks(execute=False) as callbacks:
        response = alice_api.post(f"/api/v1/publications/{publication['id']}/confirm")

    assert response.json()["status"] == "queued"
    assert response.json()["phase"] == "waiting_for_worker"
    assert response.json()["confirmed_at"]
    assert len(callbacks) >= 1


def test_missing_media_needs_attention(alice_api, brand, django_capture_on_commit_callbacks):
    publication = create(alice_api, brand, preview={"media_url": ""})

    stored = confirm(alice_api, publication, django_capture_on_commit_callbacks)

    assert (stored.status, stored.phase, stored.error_code) == ("needs_attention", "action_required", "media_missing")
    assert not LocalPublishedPost.objects.exists()


def test_a_payload_that_breaks_a_rule_fails_with_its_code(alice_api, brand, django_capture_on_commit_callbacks):
    publication = create(alice_api, brand, preview={"width": 3000, "height": 1000})

    stored = confirm(alice_api, publication, django_capture_on_commit_callbacks)

    assert (stored.status, stored.phase, stored.error_code) == ("failed", "rejected", "invalid_aspect_ratio")
    assert stored.error_message
    assert stored.remote_id == ""


def test_publishing_twice_publishes_once(alice_api, brand, django_capture_on_commit_callbacks):
    publication = create(alice_api, brand)
    confirm(alice_api, publication, django_capture_on_commit_callbacks)

    assert publish_publication.apply(args=[publication["id"]]).get() is None
    assert LocalPublishedPost.objects.count() == 1


def test_a_second_preflight_of_the_same_payload_confirms_to_the_first_and_publishes_once(
    alice_api, brand, django_capture_on_commit_callbacks
):
    first, second = create(alice_api, brand), create(alice_api, brand)
    other_destination = create(alice_api, brand, destination_id="ig-2024")
    assert first["payload_hash"] == second["payload_hash"] != other_destination["payload_hash"]

    with django_capture_on_commit_callbacks(execute=True):
        confirmed = alice_api.post(f"/api/v1/publications/{first['id']}/confirm")
        again = alice_api.post(f"/api/v1/publications/{second['id']}/confirm")
        elsewhere = alice_api.post(f"/api/v1/publications/{other_destination['id']}/confirm")

    assert confirmed.status_code == again.status_code == elsewhere.status_code == 200
    assert (again.json()["id"], again.json()["status"]) == (first["id"], "queued")  # the first, as it was then
    assert Publication.objects.get(id=first["id"]).status == "succeeded"
    assert Publication.objects.get(id=second["id"]).status == "preflight"  # left as it was
    assert elsewhere.json()["id"] == other_destination["id"]
    assert LocalPublishedPost.objects.count() == 2  # one post per payload


def test_a_scheduled_publication_waits_for_its_time_then_is_published_once(alice_api, brand):
    """Confirmed with `scheduled_at`, it is queued (phase `scheduled`) and nothing takes it early, not even a
    stray message; the minute job sends it once its time has come (Celery runs eagerly in tests)."""
    at = (timezone.now() + timedelta(hours=3)).astimezone(timezone.get_fixed_timezone(60))
    created = create(alice_api, brand, scheduled_at=at.isoformat())
    assert created["scheduled_at"] is not None

    confirmed = alice_api.post(f"/api/v1/publications/{created['id']}/confirm").json()
    publish_publication.apply(args=[created["id"]])  # a stray message before its time
    assert requeue_publications.apply().get() == 0

    assert (confirmed["status"], confirmed["phase"]) == ("queued", "scheduled")
    assert Publication.objects.get(id=created["id"]).status == "queued"
    assert Publication.objects.get(id=created["id"]).expires_at == at + timedelta(hours=24)  # waits from when due
    assert not LocalPublishedPost.objects.exists()

    Publication.objects.filter(id=created["id"]).update(scheduled_at=timezone.now() - timedelta(seconds=1))
    assert requeue_publications.apply().get() == 1
    assert requeue_publications.apply().get() == 0

    assert Publication.objects.get(id=created["id"]).status == "succeeded"
    assert LocalPublishedPost.objects.count() == 1


def test_a_confirmed_publication_outlives_the_preflight_window(alice_api, brand):
    """A broker backlog does not cancel a confirmed post: confirming moves `expires_at` a day on."""
    created = create(alice_api, brand)
    alice_api.post(f"/api/v1/publications/{created['id']}/confirm")  # no on-commit callback ran: nothing was sent
    Publication.objects.filter(id=created["id"]).update(updated_at=timezone.now() - timedelta(hours=1))

    assert expire_preflights.apply().get() == 0
    assert Publication.objects.get(id=created["id"]).expires_at > timezone.now() + timedelta(hours=23)


def test_a_schedule_without_its_offset_or_out_of_range_is_422(alice_api, brand):
    refused = {
        "2030-01-01T09:00:00": ("value_error", "time zone offset"),
        "2020-01-01T09:00:00Z": ("value_error", "between a minute and a year ahead"),
        "2099-01-01T09:00:00Z": ("value_error", "between a minute and a year ahead"),
        "tomorrow": ("datetime_from_date_parsing", ""),
    }
    answered = {}
    for scheduled_at in refused:
        response = alice_api.post(f"/api/v1/brands/{brand.id}/publications", body(scheduled_at=scheduled_at))
        [detail] = response.json()["detail"]
        assert (response.status_code, detail["loc"]) == (422, ["body", "scheduled_at"]), response.content
        says = refused[scheduled_at][1]
        answered[scheduled_at] = (detail["type"], says if says in detail["msg"] else detail["msg"])

    assert answered == refused
    assert not Publication.objects.exists()


def test_confirm_twice_is_409(alice_api, brand, django_capture_on_commit_callbacks):
    publication = create(alice_api, brand)
    confirm(alice_api, publication, django_capture_on_commit_callbacks)

    response = alice_api.post(f"/api/v1/publications/{publication['id']}/confirm")

    assert response.status_code == 409
    assert response.json()["code"] == "invalid_state"


def test_an_expired_preflight_cannot_be_confirmed(alice_api, brand):
    publication = create(alice_api, brand)
    Publication.objects.filter(id=publication["id"]).update(expires_at=timezone.now() - timedelta(seconds=1))

    response = alice_api.post(f"/api/v1/publications/{publication['id']}/confirm")

    assert response.status_code == 409
    assert Publication.objects.get(id=publication["id"]).status == "preflight"


# --- Cancel and expiry ------------------------------------------------------------------------------------


def test_cancel_a_preflight(alice_api, brand):
    publication = create(alice_api, brand)

    response = alice_api.post(f"/api/v1/publications/{publication['id']}/cancel")

    assert response.status_code == 200
    assert (response.json()["status"], response.json()["phase"]) == ("cancelled", "cancelled_by_user")


def test_a_cancelled_queued_publication_is_never_published(alice_api, brand, django_capture_on_commit_callbacks):
    publication = create(alice_api, brand)
    with django_capture_on_commit_callbacks(execute=False):
        alice_api.post(f"/api/v1/publications/{publication['id']}/confirm")

    assert alice_api.post(f"/api/v1/publications/{publication['id']}/cancel").status_code == 200
    assert publish_publication.apply(args=[publication["id"]]).get() is None
    assert Publication.objects.get(id=publication["id"]).status == "cancelled"
    assert not LocalPublishedPost.objects.exists()


def test_a_finished_publication_cannot_be_cancelled(alice_api, brand, django_capture_on_commit_callbacks):
    publication = create(alice_api, brand)
    confirm(alice_api, publication, django_capture_on_commit_callbacks)

    response = alice_api.post(f"/api/v1/publications/{publication['id']}/cancel")

    assert response.status_code == 409
    assert response.json()["code"] == "invalid_state"
    assert Publication.objects.get(id=publication["id"]).status == "succeeded"


def test_the_beat_job_cancels_expired_preflights_once(alice_api, brand):
    expired = create(alice_api, brand)
    fresh = create(alice_api, brand)
    Publication.objects.filter(id=expired["id"]).update(expires_at=timezone.now() - timedelta(minutes=1))

    assert expire_preflights.apply().get() == 1
    assert publications_expire() == 0

    assert Publication.objects.get(id=expired["id"]).status == "cancelled"
    assert Publication.objects.get(id=expired["id"]).phase == "expired"
    assert Publication.objects.get(id=fresh["id"]).status == "preflight"


def test_a_confirmed_publication_whose_message_was_lost_is_queued_again(alice_api, brand):
    """Confirmed while the broker was down (or its message lost): the beat queues it again once it has
    waited PUBLICATION_REQUEUE_AFTER_SECONDS, and it is published (Celery runs eagerly in tests)."""
    lost, waiting, expired = (create(alice_api, brand, creative_id=str(uuid.uuid4())) for _ in range(3))
    for publication in (lost, waiting, expired):  # confirmed, but no on-commit callback ran: nothing was queued
        assert alice_api.post(f"/api/v1/publications/{publication['id']}/confirm").status_code == 200
    long_ago = timezone.now() - timedelta(minutes=10)
    Publication.objects.filter(id=lost["id"]).update(updated_at=long_ago)
    Publication.objects.filter(id=expired["id"]).update(updated_at=long_ago, expires_at=timezone.now())

    assert requeue_publications.apply().get() == 1

    assert Publication.objects.get(id=lost["id"]).status == "succeeded"
    assert LocalPublishedPost.objects.count() == 1
    assert Publication.objects.get(id=waiting["id"]).status == "queued"  # not waited long enough yet
    assert Publication.objects.get(id=expired["id"]).status == "queued"  # the expiry job cancels it instead
    assert requeue_publications.apply().get() == 0


# --- Events ---------------------------------------------------------------------------------------------------


def test_every_status_change_is_an_event(alice_api, alice, brand, django_capture_on_commit_callbacks):
    with running_server() as server:
        webhook_subscription_create(owner=alice, url=server.base_url + "/hook", events=["publication.status_changed"])
        publication = create(alice_api, brand)
        confirm(alice_api, publication, django_capture_on_commit_callbacks)

    events = [json.loads(e.body) for e in WebhookEvent.objects.order_by("created_at")]
    assert {e["type"] for e in events} == {"publication.status_changed"}
    assert [(e["data"]["previous_status"], e["data"]["status"]) for e in events] == [
        ("preflight", "queued"),
        ("queued", "processing"),
        ("processing", "succeeded"),
    ]
    assert events[-1]["data"]["publication_id"] == publication["id"]
    assert events[-1]["data"]["remote_id"]


# --- List -------------------------------------------------------------------------------------------------------


def test_list_is_a_bare_array_filtered_and_paged(alice_api, brand):
    instagram = create(alice_api, brand)
    facebook = create(alice_api, brand, platform="facebook", preview={"width": None, "height": None})
    other_creative = create(alice_api, brand, creative_id=str(uuid.uuid4()))
    alice_api.post(f"/api/v1/publications/{instagram['id']}/cancel")
    list_url = f"/api/v1/brands/{brand.id}/publications"

    def ids(**params):
        response = alice_api.get(list_url, params)
        assert response.status_code == 200, response.content
        assert isinstance(response.json(), list)
        return [p["id"] for p in response.json()]

    assert ids() == [other_creative["id"], facebook["id"], instagram["id"]]
    assert ids(status="cancelled") == [instagram["id"]]
    assert ids(platform="facebook") == [facebook["id"]]
    assert ids(action="meta_creative_save") == []
    assert ids(creative_id=str(CREATIVE)) == [facebook["id"], instagram["id"]]
    assert ids(limit=1, offset=1) == [facebook["id"]]
    assert alice_api.get(list_url, {"limit": 201}).status_code == 422
    assert alice_api.get(list_url, {"limit": 0}).status_code == 422


def test_the_link_header_pages_through_the_list_to_its_end(alice_api, brand):
    """A bare array pages by `Link: <...>; rel="next"` (a cursor the list ignored would loop on page 1
    forever); the filters travel with it, and the last page has none."""
    made = [create(alice_api, brand, creative_id=str(uuid.uuid4())) for _ in range(5)]
    create(alice_api, brand, platform="facebook", preview={"width": None, "height": None})
    url, seen, links = f"/api/v1/brands/{brand.id}/publications?platform=instagram&limit=2", [], []
    while url:
        response = alice_api.get(url)
        assert response.status_code == 200, response.content
        seen += [p["id"] for p in response.json()]
        link = response.headers.get("Link")
        links.append(link)
        url = re.fullmatch(r'<(https?://[^/>]+/[^>]+)>; rel="next"', link)[1] if link else None

    assert seen == [p["id"] for p in reversed(made)]
    assert len(links) == 3 and links[-1] is None
    assert all("platform=instagram" in link and "limit=2" in link for link in links[:-1])


def test_a_publications_cursor_not_of_this_list_or_with_an_offset_is_422(alice_api, brand):
    url = f"/api/v1/brands/{brand.id}/publications"

    bad = alice_api.get(url, {"cursor": "not-a-cursor"})
    combined = alice_api.get(url, {"cursor": "WyJ4Il0", "offset": 1})

    assert (bad.status_code, combined.status_code) == (422, 422)
    assert bad.json()["detail"][0]["loc"] == ["query", "cursor"]
    assert combined.json()["detail"][0]["loc"] == ["query", "offset"]


def test_list_uses_a_constant_number_of_queries(alice_api, brand):
    assert_constant_queries(alice_api, f"/api/v1/brands/{brand.id}/publications", lambda: create(alice_api, brand))


# --- Ownership -------------------------------------------------------------------------------------------------


def test_another_users_publications_are_404(alice_api, bob_api, brand):
    publication = create(alice_api, brand)

    assert bob_api.get(f"/api/v1/brands/{brand.id}/publications").status_code == 404
    assert bob_api.post(f"/api/v1/brands/{brand.id}/publications", body()).status_code == 404
    assert bob_api.post(f"/api/v1/publications/{publication['id']}/confirm").status_code == 404
    assert bob_api.post(f"/api/v1/publications/{publication['id']}/cancel").status_code == 404
    assert Publication.objects.get(id=publication["id"]).status == "preflight"


def test_api_key_is_403(alice_key_api, brand):
    response = alice_key_api.post(f"/api/v1/publications/{uuid.uuid4()}/confirm")

    assert response.status_code == 403
    assert response.json()["code"] == "api_key_not_allowed"
