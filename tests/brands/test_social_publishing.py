"""Publishing through a connected account, against local stand-ins of Meta's Graph API and LinkedIn's Posts API
(tests/support/social_platforms.py): the platforms' request shapes, an expired token, a rate limit, and a post
the platform stored whose answer was lost (docs/decisions.md#publishing-adapters,
docs/decisions.md#publication-lookup-on-resume)."""

from __future__ import annotations

import json
import uuid
from datetime import timedelta
from urllib.parse import parse_qs

import pytest
from django.utils import timezone

from brands.models import ConnectedAccount, Publication
from brands.providers.social import Content, RateLimited, TokenExpired, social_adapter
from brands.services.connections import connection_store
from brands.services.publications import publication_confirm, publication_create, publication_process
from core.http.errors import ProviderUnavailable
from tests.brands.factories import BrandFactory
from tests.support.social_platforms import install

pytestmark = pytest.mark.django_db

TOKEN = "EAAB-page-token"
CAPTION = "Run further. #trail"
ACCOUNT = {"facebook_page": "104612345", "instagram": "17841400000000001"}
PUBLICATION_PLATFORM = {"facebook_page": "facebook", "instagram": "instagram"}


@pytest.fixture
def brand(alice):
    return BrandFactory(owner=alice)


def confirmed(alice, brand, platform: str) -> Publication:
    connection_store(
        owner=alice,
        brand_id=brand.id,
        platform=platform,
        account_id=ACCOUNT[platform],
        account_name="Acme",
        access_token=TOKEN,
    )
    publication = publication_create(
        owner=alice,
        brand_id=brand.id,
        data={
            "creative_id": uuid.uuid4(),
            "action": "social_publish",
            "platform": PUBLICATION_PLATFORM[platform],
            "destination_id": ACCOUNT[platform],
            "preview": {
                "media_url": "https://cdn.example/shoe.png",
                "media_sha256": "ab" * 32,
                "content_type": "image/png",
                "width": 1080,
                "height": 1080,
                "copy": {"caption": CAPTION, "link_url": "https://acme.example/shoe"},
            },
        },
    )
    return publication_confirm(owner=alice, publication_id=publication.id)


def form(request):
    return {k: v[0] for k, v in parse_qs(request.content.decode()).items()}


PLATFORMS = ["facebook_page", "instagram"]


@pytest.mark.parametrize("platform", PLATFORMS)
def test_a_confirmed_post_goes_to_the_platform_with_its_request_shape(monkeypatch, alice, brand, platform):
    fake = install(monkeypatch, platform)
    publication = confirmed(alice, brand, platform)

    assert publication_process(publication_id=publication.id) == "succeeded"

    publication.refresh_from_db()
    account = ACCOUNT[platform]
    writes = fake.writes()
    if platform == "facebook_page":
        assert [r.url.path for r in writes] == [f"/v21.0/{account}/feed"]
        assert form(writes[0]) == {"message": CAPTION, "link": "https://acme.example/shoe", "access_token": TOKEN}
        assert publication.permalink == f"https://www.facebook.com/{publication.remote_id}"
    else:
        assert [r.url.path for r in writes] == [f"/v21.0/{account}/media", f"/v21.0/{account}/media_publish"]
        assert form(writes[0]) == {
            "caption": CAPTION,
            "image_url": "https://cdn.example/shoe.png",
            "access_token": TOKEN,
        }
        assert form(writes[1])["creation_id"]
        assert publication.permalink == f"https://www.instagram.com/p/{publication.remote_id}/"
    assert (publication.status, publication.phase) == ("succeeded", "published")
    assert publication.remote_id == fake.posts[0]["id"]
    assert ConnectedAccount.objects.get(account_id=account).health == "healthy"


@pytest.mark.parametrize("platform", PLATFORMS)
def test_an_expired_token_fails_the_publication_once_and_marks_the_connection(monkeypatch, alice, brand, platform):
    fake = install(monkeypatch, platform)
    fake.fail_next = ["token_expired"]
    publication = confirmed(alice, brand, platform)

    assert publication_process(publication_id=publication.id) == "failed"

    publication.refresh_from_db()
    assert publication.error_code == "connection_expired" and "connect the account again" in publication.error_message
    connection = ConnectedAccount.objects.get(account_id=ACCOUNT[platform])
    assert connection.health == "token_expired" and "Session has expired" in connection.last_error
    assert len(fake.requests) == 1 and fake.posts == []  # no retry storm


@pytest.mark.parametrize("platform", PLATFORMS)
def test_a_rate_limit_is_retried_not_failed(monkeypatch, alice, brand, platform):
    fake = install(monkeypatch, platform)
    fake.fail_next = ["rate_limited"]
    publication = confirmed(alice, brand, platform)

    with pytest.raises(RateLimited):
        publication_process(publication_id=publication.id)
    assert Publication.objects.get(id=publication.id).status == "processing"

    assert publication_process(publication_id=publication.id, resume=True) == "succeeded"
    assert len(fake.posts) == 1


@pytest.mark.parametrize("platform", PLATFORMS)
def test_a_post_whose_answer_was_lost_is_found_at_the_platform_not_posted_twice(monkeypatch, alice, brand, platform):
    fake = install(monkeypatch, platform)
    fake.fail_next = ["lose_answer"] if platform == "facebook_page" else [None, "lose_answer"]
    publication = confirmed(alice, brand, platform)

    with pytest.raises(ProviderUnavailable):
        publication_process(publication_id=publication.id)
    assert len(fake.posts) == 1  # the platform has it; we do not know

    assert publication_process(publication_id=publication.id, resume=True) == "succeeded"

    publication.refresh_from_db()
    assert len(fake.posts) == 1
    assert publication.remote_id == fake.posts[0]["id"]
    assert fake.requests[-1].method == "GET"  # the resumed run only looked


def test_without_a_connected_account_the_configured_provider_publishes(monkeypatch, alice, brand):
    fake = install(monkeypatch, "facebook_page")
    publication = confirmed(alice, brand, "facebook_page")
    ConnectedAccount.objects.all().delete()

    assert publication_process(publication_id=publication.id) == "succeeded"
    assert Publication.objects.get(id=publication.id).phase == "simulated" and fake.requests == []


# --- LinkedIn, at the adapter (publications to LinkedIn: tests/brands/test_publish_refresh.py) ------------------


AUTHOR = "urn:li:organization:5515715"
CONTENT = Content(text=CAPTION, link="", media_url="", kind="image")


def test_linkedin_posts_with_its_headers_and_reads_the_id_from_x_restli_id(monkeypatch):
    fake = install(monkeypatch, "linkedin")
    post = social_adapter("linkedin").publish(token=TOKEN, account_id=AUTHOR, content=CONTENT)

    (request,) = fake.writes()
    assert request.url.path == "/rest/posts"
    assert request.headers["Authorization"] == f"Bearer {TOKEN}"
    assert request.headers["X-Restli-Protocol-Version"] == "2.0.0" and request.headers["LinkedIn-Version"] == "202411"
    body = json.loads(request.content)
    assert body["author"] == AUTHOR and body["commentary"] == CAPTION and body["lifecycleState"] == "PUBLISHED"
    assert body["distribution"]["feedDistribution"] == "MAIN_FEED"
    assert post.remote_id == fake.posts[0]["id"] and post.permalink.endswith(f"{post.remote_id}/")


@pytest.mark.parametrize(("failure", "raised"), [("token_expired", TokenExpired), ("rate_limited", RateLimited)])
def test_linkedin_401_and_429(monkeypatch, failure, raised):
    fake = install(monkeypatch, "linkedin")
    fake.fail_next = [failure]
    with pytest.raises(raised) as caught:
        social_adapter("linkedin").publish(token=TOKEN, account_id=AUTHOR, content=CONTENT)
    if raised is RateLimited:
        assert caught.value.retry_after == 120


def test_linkedin_finds_a_post_whose_answer_was_lost(monkeypatch):
    fake = install(monkeypatch, "linkedin")
    fake.fail_next = ["lose_answer"]
    adapter = social_adapter("linkedin")
    since = timezone.now() - timedelta(seconds=5)
    with pytest.raises(ProviderUnavailable):
        adapter.publish(token=TOKEN, account_id=AUTHOR, content=CONTENT)

    found = adapter.find_post(token=TOKEN, account_id=AUTHOR, content=CONTENT, since=since)
    assert found is not None and found.remote_id == fake.posts[0]["id"]
    assert fake.requests[-1].headers["X-RestLi-Method"] == "FINDER"
    assert (
        adapter.find_post(token=TOKEN, account_id=AUTHOR, content=Content("other", "", "", "image"), since=since)
        is None
    )
