"""Publishing to LinkedIn as a publication platform, and the token refreshed once at publish time
(docs/decisions.md#publishing-adapters, docs/decisions.md#token-refresh-and-health), against the stand-ins of
LinkedIn's Posts API and OAuth endpoints (tests/support/social_platforms.py)."""

from __future__ import annotations

import json
import uuid
from datetime import timedelta

import pytest
from django.utils import timezone

from brands.models import ConnectedAccount, Publication
from brands.services.connections import connection_store
from brands.services.publications import publication_confirm, publication_create, publication_process
from core.http.errors import ProviderUnavailable
from tests.brands.factories import BrandFactory
from tests.support.social_platforms import install, install_oauth

pytestmark = pytest.mark.django_db

AUTHOR = "urn:li:person:782bbtaQ"
CAPTION = "Run further. #trail"


@pytest.fixture
def brand(alice):
    return BrandFactory(owner=alice)


def confirmed(alice, brand, *, refresh="AQW-refresh-1", expires_in=timedelta(days=30), simulated=False):
    connection_store(
        owner=alice,
        brand_id=brand.id,
        platform="linkedin",
        account_id=AUTHOR,
        account_name="Ada",
        access_token="AQV-old",
        refresh_token=refresh,
        token_expires_at=timezone.now() + expires_in,
        simulated=simulated,
    )
    publication = publication_create(
        owner=alice,
        brand_id=brand.id,
        data={
            "creative_id": uuid.uuid4(),
            "action": "social_publish",
            "platform": "linkedin",
            "destination_id": AUTHOR,
            "preview": {"kind": "image", "copy": {"caption": CAPTION, "link_url": "https://acme.example/shoe"}},
        },
    )
    return publication_confirm(owner=alice, publication_id=publication.id)


def test_a_linkedin_publication_posts_through_the_posts_api(monkeypatch, alice, brand):
    fake = install(monkeypatch, "linkedin")
    publication = confirmed(alice, brand)

    assert publication_process(publication_id=publication.id) == "succeeded"

    [write] = fake.writes()
    assert write.url.path == "/rest/posts" and write.headers["X-Restli-Protocol-Version"] == "2.0.0"
    assert write.headers["Authorization"] == "Bearer AQV-old" and write.headers["LinkedIn-Version"]
    body = json.loads(write.content)
    assert (body["author"], body["commentary"], body["lifecycleState"]) == (AUTHOR, CAPTION, "PUBLISHED")
    assert body["content"]["article"]["source"] == "https://acme.example/shoe"
    publication.refresh_from_db()
    assert (publication.status, publication.phase) == ("succeeded", "published")
    assert publication.remote_id == fake.posts[0]["id"]
    assert publication.permalink == f"https://www.linkedin.com/feed/update/{publication.remote_id}/"


def test_a_linkedin_post_whose_answer_was_lost_is_found_not_posted_twice(monkeypatch, alice, brand):
    fake = install(monkeypatch, "linkedin")
    fake.fail_next = ["lose_answer"]
    publication = confirmed(alice, brand)

    with pytest.raises(ProviderUnavailable):
        publication_process(publication_id=publication.id)
    assert publication_process(publication_id=publication.id, resume=True) == "succeeded"

    assert len(fake.posts) == 1 and fake.requests[-1].method == "GET"
    assert Publication.objects.get(id=publication.id).remote_id == fake.posts[0]["id"]


def test_a_token_the_platform_refuses_is_refreshed_once_and_the_post_made(monkeypatch, settings, alice, brand):
    platform = install(monkeypatch, "linkedin")
    oauth = install_oauth(monkeypatch, settings, "linkedin")
    platform.fail_next = ["token_expired"]
    publication = confirmed(alice, brand)

    assert publication_process(publication_id=publication.id) == "succeeded"

    assert [r.headers["Authorization"] for r in platform.writes()] == ["Bearer AQV-old", "Bearer AQV-access-1"]
    assert len(oauth.requests) == 1 and len(platform.posts) == 1
    connection = ConnectedAccount.objects.get()
    assert (connection.access_token, connection.health) == ("AQV-access-1", "healthy")


def test_a_token_past_its_expiry_is_refreshed_before_posting(monkeypatch, settings, alice, brand):
    platform = install(monkeypatch, "linkedin")
    oauth = install_oauth(monkeypatch, settings, "linkedin")
    publication = confirmed(alice, brand, expires_in=-timedelta(minutes=5))

    assert publication_process(publication_id=publication.id) == "succeeded"

    assert len(oauth.requests) == 1
    assert [r.headers["Authorization"] for r in platform.writes()] == ["Bearer AQV-access-1"]


@pytest.mark.parametrize("refresh", ["AQW-revoked", ""])
def test_a_revoked_grant_fails_the_publication_clearly_and_refreshes_once_at_most(
    monkeypatch, settings, alice, brand, refresh
):
    platform = install(monkeypatch, "linkedin")
    oauth = install_oauth(monkeypatch, settings, "linkedin")
    platform.fail_next = ["token_expired", "token_expired"]
    publication = confirmed(alice, brand, refresh=refresh)

    assert publication_process(publication_id=publication.id) == "failed"

    publication.refresh_from_db()
    assert publication.error_code == "connection_expired" and "connect the account again" in publication.error_message
    assert len(platform.writes()) == 1 and len(oauth.requests) == (1 if refresh else 0)
    connection = ConnectedAccount.objects.get()
    assert connection.health == "token_expired"
    assert ("invalid" in connection.last_error) if refresh else ("revoked by the user" in connection.last_error)


def test_a_simulated_connection_publishes_through_the_configured_provider(monkeypatch, alice, brand):
    platform = install(monkeypatch, "linkedin")
    publication = confirmed(alice, brand, simulated=True)

    assert publication_process(publication_id=publication.id) == "succeeded"

    assert Publication.objects.get(id=publication.id).phase == "simulated" and platform.requests == []
