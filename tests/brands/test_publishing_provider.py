"""The local publishing provider: platform rules, and an idempotent record of what it published."""

from __future__ import annotations

import pytest

from brands.models import LocalPublishedPost, Publication
from brands.providers.publishing import LocalPublisher, PublishRequest
from brands.services.publications import payload_hash
from tests.brands.factories import BrandFactory

pytestmark = pytest.mark.django_db


def payload(platform="instagram", action="social_publish", **preview):
    base = {
        "platform": platform,
        "placement": "feed",
        "kind": "image",
        "media_url": "https://cdn.example/a.png",
        "media_sha256": "0" * 64,
        "content_type": "image/png",
        "width": 1080,
        "height": 1350,
        "copy": {"caption": "Hello", "primary_text": "", "headline": "", "description": "", "link_url": ""},
        "duration_s": None,
    }
    base.update(preview)
    return {"action": action, "platform": platform, "destination_id": "d1", "preview": base}


@pytest.mark.parametrize(
    ("data", "status", "code"),
    [
        (payload(media_url=""), "needs_attention", "media_missing"),
        (payload(platform="facebook", media_url="", copy={"caption": ""}), "needs_attention", "copy_missing"),
        (payload(media_url="ftp://files/a.png"), "failed", "invalid_media_url"),
        (payload(media_sha256="xyz"), "failed", "invalid_media_sha256"),
        (payload(content_type="application/pdf"), "failed", "unsupported_media_type"),
        (payload(copy={"caption": "x" * 2201}), "failed", "caption_too_long"),
        (payload(copy={"caption": " ".join(f"#t{i}" for i in range(31))}), "failed", "too_many_hashtags"),
        (payload(width=1000, height=2000), "failed", "invalid_aspect_ratio"),
        (payload(width=200, height=200), "failed", "image_too_small"),
        (
            payload(kind="video", content_type="video/mp4", duration_s=120.0, width=None, height=None),
            "failed",
            "video_too_long",
        ),
        (payload(action="meta_creative_save", copy={"headline": "Hi"}), "needs_attention", "link_missing"),
    ],
    ids=lambda v: v if isinstance(v, str) else "",
)
def test_rules(data, status, code):
    result = LocalPublisher().publish(
        PublishRequest("00000000-0000-0000-0000-000000000001", data["action"], data["platform"], "d1", data, "h")
    )

    assert (result.status, result.error_code) == (status, code)
    assert result.error_message
    assert not LocalPublishedPost.objects.exists()


def test_a_valid_post_is_recorded_once(alice):
    brand = BrandFactory(owner=alice)
    data = payload(platform="facebook", width=1200, height=628, copy={"caption": "x" * 200})
    publication = Publication.objects.create(
        brand=brand,
        creative_id="00000000-0000-0000-0000-000000000002",
        action="social_publish",
        platform="facebook",
        payload=data,
        payload_hash=payload_hash(data),
        destination_id="page/1",
        preview=data["preview"],
        expires_at="2030-01-01T00:00:00Z",
    )
    request = PublishRequest(str(publication.id), "social_publish", "facebook", "page/1", data, payload_hash(data))

    first = LocalPublisher().publish(request)
    again = LocalPublisher().publish(request)

    assert first.status == "succeeded"
    assert first.remote_id == again.remote_id
    assert first.permalink.endswith(f"/facebook/page%2F1/{first.remote_id}")
    assert "Captions over 125 characters are cut off in the feed." in first.warnings
    assert LocalPublishedPost.objects.get().payload == data


def test_check_reports_without_publishing():
    problems, warnings = LocalPublisher().check(payload(media_sha256=""))

    assert problems == []
    assert warnings == ["No media_sha256: the media cannot be verified before publishing."]
