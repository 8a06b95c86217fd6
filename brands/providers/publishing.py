"""Publishing providers: where a confirmed publication goes.

The interface is one call, `publish(request) -> PublishResult`, idempotent on the request's
`idempotency_key` (the publication id): publishing the same publication twice returns the same
remote post. `check(payload)` runs the same rules without publishing, for the preflight warnings.

`local` (the default, PUBLISHING_PROVIDER=local) applies the platforms' rules to the payload and,
when they pass, stores the post (LocalPublishedPost) with a remote id and permalink, as the
platform would. Results:

- `succeeded` with `remote_id` and `permalink`, marked `simulated` (the publication's phase says so: the
  post was recorded here and reached no platform, so a deploy check refuses this provider in production
  unless a demo deployment opts in);
- `needs_attention` when something the owner must supply is missing (`error_code` `media_missing`,
  `copy_missing`, `link_missing`);
- `failed` when the payload breaks a platform rule (`invalid_media_url`, `invalid_media_sha256`,
  `unsupported_media_type`, `caption_too_long`, `too_many_hashtags`, `invalid_aspect_ratio`,
  `image_too_small`, `video_too_long`, `platform_mismatch`).

A provider that cannot be reached raises core.http.errors.ProviderUnavailable; the publisher retries.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from functools import cache
from typing import Protocol
from urllib.parse import quote

from django.conf import settings
from django.db import IntegrityError, transaction

from brands.models import LocalPublishedPost
from core.http.errors import ProviderUnavailable

SUCCEEDED, FAILED, NEEDS_ATTENTION = "succeeded", "failed", "needs_attention"

CAPTION_LIMITS = {"instagram": 2200, "facebook": 63206, "linkedin": 3000}
MAX_HASHTAGS = {"instagram": 30, "facebook": 30, "linkedin": 30}
VIDEO_LIMITS_S = {"instagram": 90.0, "facebook": 14_400.0}
INSTAGRAM_MIN_WIDTH = 320
INSTAGRAM_ASPECT = (0.8, 1.91)  # 4:5 portrait to 1.91:1 landscape
CONTENT_TYPES = {
    "image": ("image/jpeg", "image/png", "image/webp", "image/gif"),
    "video": ("video/mp4", "video/quicktime"),
    "carousel": ("image/jpeg", "image/png", "image/webp", "video/mp4"),
}
_SHA256 = re.compile(r"^[0-9a-f]{64}$")
_HASHTAG = re.compile(r"(?<!\w)#\w+")


@dataclass(frozen=True)
class PublishRequest:
    idempotency_key: str
    action: str
    platform: str
    destination_id: str
    payload: dict
    payload_hash: str


@dataclass(frozen=True)
class PublishResult:
    status: str  # succeeded | failed | needs_attention
    remote_id: str = ""
    permalink: str = ""
    error_code: str = ""
    error_message: str = ""
    warnings: list[str] = field(default_factory=list)
    simulated: bool = False  # the local provider's success: recorded here, posted to no platform


@dataclass(frozen=True)
class Problem:
    status: str  # failed | needs_attention
    code: str
    message: str


class PublishingProvider(Protocol):
    name: str

    def check(self, payload: dict) -> tuple[list[Problem], list[str]]: ...

    def publish(self, request: PublishRequest) -> PublishResult: ...


def _problems(payload: dict) -> tuple[list[Problem], list[str]]:
    """The platform rules. Returns (problems that block publishing, advisory warnings)."""
    problems: list[Problem] = []
    warnings: list[str] = []
    platform = payload.get("platform", "")
    action = payload.get("action", "")
    preview = payload.get("preview") or {}
    copy = preview.get("copy") or {}
    kind = preview.get("kind") or "image"
    media_url = preview.get("media_url") or ""
    caption = copy.get("caption") or copy.get("primary_text") or ""

    if preview.get("platform") and preview["platform"] != platform:
        problems.append(Problem(FAILED, "platform_mismatch", "The preview was made for another platform."))
    if not media_url:
        if platform == "instagram" or action == "meta_creative_save" or kind != "image":
            problems.append(Problem(NEEDS_ATTENTION, "media_missing", "The creative has no media to publish."))
        elif not caption:
            problems.append(Problem(NEEDS_ATTENTION, "copy_missing", "A post needs media or a caption."))
    elif not re.match(r"^https?://[^\s/]+", media_url):
        problems.append(Problem(FAILED, "invalid_media_url", "media_url must be an absolute http(s) URL."))
    sha = preview.get("media_sha256") or ""
    if sha and not _SHA256.match(sha):
        problems.append(Problem(FAILED, "invalid_media_sha256", "media_sha256 must be 64 lower-case hex digits."))
    elif media_url and not sha:
        warnings.append("No media_sha256: the media cannot be verified before publishing.")
    content_type = (preview.get("content_type") or "").split(";")[0].strip().lower()
    if content_type and content_type not in CONTENT_TYPES.get(kind, ()):
        problems.append(Problem(FAILED, "unsupported_media_type", f"{content_type!r} cannot be published as a {kind}."))
    limit = CAPTION_LIMITS.get(platform)
    if limit and len(caption) > limit:
        problems.append(Problem(FAILED, "caption_too_long", f"The caption is over {limit} characters."))
    if len(_HASHTAG.findall(caption)) > MAX_HASHTAGS.get(platform, 30):
        problems.append(Problem(FAILED, "too_many_hashtags", "The caption has more than 30 hashtags."))
    width, height = preview.get("width"), preview.get("height")
    if platform == "instagram" and kind == "image" and width and height:
        ratio = width / height
        if not INSTAGRAM_ASPECT[0] <= ratio <= INSTAGRAM_ASPECT[1]:
            problems.append(Problem(FAILED, "invalid_aspect_ratio", "Instagram images must be between 4:5 and 1.91:1."))
        if width < INSTAGRAM_MIN_WIDTH:
            problems.append(Problem(FAILED, "image_too_small", "Instagram images must be at least 320 px wide."))
    duration = preview.get("duration_s")
    if kind == "video" and duration and duration > VIDEO_LIMITS_S.get(platform, float("inf")):
        problems.append(Problem(FAILED, "video_too_long", f"The video is longer than {platform} allows."))
    if action == "meta_creative_save":
        if not (copy.get("primary_text") or copy.get("headline")):
            problems.append(
                Problem(NEEDS_ATTENTION, "copy_missing", "An ad creative needs a primary text or headline.")
            )
        if not copy.get("link_url"):
            problems.append(Problem(NEEDS_ATTENTION, "link_missing", "An ad creative needs a link_url."))
    if platform == "instagram" and copy.get("link_url") and action == "social_publish":
        warnings.append("Links in Instagram captions are not clickable.")
    if platform == "facebook" and len(caption) > 125:
        warnings.append("Captions over 125 characters are cut off in the feed.")
    return problems, warnings


class LocalPublisher:
    """Applies the rules and records the post on this machine (see the module docstring)."""

    name = "local"

    def check(self, payload: dict) -> tuple[list[Problem], list[str]]:
        return _problems(payload)

    def publish(self, request: PublishRequest) -> PublishResult:
        problems, warnings = _problems(request.payload)
        if problems:
            first = next((p for p in problems if p.status == FAILED), problems[0])
            return PublishResult(
                status=first.status, error_code=first.code, error_message=first.message, warnings=warnings
            )
        post = LocalPublishedPost.objects.filter(publication_id=request.idempotency_key).first()
        if post is None:
            try:
                with transaction.atomic():
                    post = LocalPublishedPost.objects.create(
                        publication_id=request.idempotency_key,
                        platform=request.platform,
                        action=request.action,
                        destination_id=request.destination_id,
                        remote_id=f"local_{request.payload_hash[:12]}_{request.idempotency_key.replace('-', '')[:12]}",
                        payload=request.payload,
                        payload_hash=request.payload_hash,
                    )
            except IntegrityError:  # the same publication, published concurrently
                post = LocalPublishedPost.objects.get(publication_id=request.idempotency_key)
        return PublishResult(
            status=SUCCEEDED,
            remote_id=post.remote_id,
            permalink="/".join(
                (
                    settings.PUBLISHING_LOCAL_PERMALINK_BASE,
                    post.platform,
                    quote(post.destination_id, safe=""),
                    post.remote_id,
                )
            ),
            warnings=warnings,
            simulated=True,
        )


@cache
def _providers() -> dict[str, PublishingProvider]:
    return {"local": LocalPublisher()}


def get_publishing_provider() -> PublishingProvider:
    try:
        return _providers()[settings.PUBLISHING_PROVIDER]
    except KeyError as exc:
        raise ProviderUnavailable(f"Unknown publishing provider {settings.PUBLISHING_PROVIDER!r}.") from exc
