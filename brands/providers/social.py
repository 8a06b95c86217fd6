"""Publishing to the platforms themselves, through a brand's connected account (docs/decisions.md#publishing-adapters).

One adapter per platform, over httpx, with the platform's own request shapes:

- `facebook_page`: Meta Graph API `POST /{page-id}/feed` (`message`, `link`, the page access token) → `{"id"}`;
- `instagram`: `POST /{ig-user-id}/media` (`image_url` or `video_url` + `media_type=REELS`, `caption`) → a
  container id, then `POST /{ig-user-id}/media_publish` (`creation_id`) → the media id;
- `linkedin`: `POST /rest/posts` (`author` URN, `commentary`, `visibility`, `distribution`, `lifecycleState`) with
  `LinkedIn-Version` and `X-Restli-Protocol-Version: 2.0.0`; 201, the post's URN in the `x-restli-id` header.

Each can also `find_post(text, since)`: the account's recent posts, the one with exactly this text published
since then (docs/decisions.md#publication-lookup-on-resume). Errors: `TokenExpired` (Meta code 190, LinkedIn
401), `RateLimited` (Meta codes 4, 17, 32, 613; HTTP 429), `ProviderUnavailable` (network, timeout, 5xx), else
`PlatformRefused` with the platform's message. Tokens are sent, never logged.
"""

from __future__ import annotations

import logging
from dataclasses import dataclass
from datetime import datetime, timedelta

import httpx
from django.conf import settings
from django.utils.dateparse import parse_datetime

from core.http.errors import ProviderUnavailable

logger = logging.getLogger(__name__)

META_TOKEN_CODES = {190}
META_RATE_CODES = {4, 17, 32, 613}
LOOKUP_LIMIT = 25
# Platform times are whole seconds on the platform's clock: a post counts from this much before `since`.
CLOCK_SKEW = timedelta(seconds=60)


class TokenExpired(Exception):
    """The platform refused the access token (expired or revoked)."""


class RateLimited(ProviderUnavailable):
    """The platform asks us to slow down; the publisher retries later."""

    code = "rate_limited"

    def __init__(self, message: str, retry_after: int | None = None):
        super().__init__(message)
        self.retry_after = retry_after


class PlatformRefused(Exception):
    def __init__(self, code: str, message: str):
        super().__init__(message)
        self.code, self.message = code, message


@dataclass(frozen=True)
class Post:
    remote_id: str
    permalink: str


@dataclass(frozen=True)
class Content:
    text: str
    link: str
    media_url: str
    kind: str  # image | video | carousel


def content_of(payload: dict) -> Content:
    preview = payload.get("preview") or {}
    copy = preview.get("copy") or {}
    return Content(
        text=copy.get("caption") or copy.get("primary_text") or "",
        link=copy.get("link_url") or "",
        media_url=preview.get("media_url") or "",
        kind=preview.get("kind") or "image",
    )


class Adapter:
    platform = ""

    def __init__(self, transport: httpx.BaseTransport | None = None):
        self.transport = transport  # tests give an httpx.MockTransport (tests/support/social_platforms.py)

    def client(self) -> httpx.Client:
        return httpx.Client(timeout=settings.SOCIAL_HTTP_TIMEOUT_SECONDS, transport=self.transport)


def _send(client: httpx.Client, method: str, url: str, **kwargs) -> httpx.Response:
    try:
        return client.request(method, url, **kwargs)
    except httpx.HTTPError as exc:  # timeout, refused, reset: the platform may or may not have it
        raise ProviderUnavailable(f"The platform could not be reached: {type(exc).__name__}.") from exc


def _retry_after(response: httpx.Response) -> int | None:
    value = response.headers.get("retry-after", "")
    return int(value) if value.isdigit() else None


class MetaGraph:
    """Shared by the Facebook Page and Instagram adapters: the Graph API's error shape."""

    @staticmethod
    def base() -> str:
        return f"{settings.META_GRAPH_BASE_URL.rstrip('/')}/{settings.META_GRAPH_VERSION}"

    @staticmethod
    def answer(response: httpx.Response) -> dict:
        try:
            body = response.json()
        except ValueError:
            body = {}
        if response.is_success and "error" not in body:
            return body
        error = body.get("error") or {}
        code, message = error.get("code"), error.get("message") or f"HTTP {response.status_code}"
        if code in META_TOKEN_CODES:
            raise TokenExpired(message)
        if code in META_RATE_CODES or response.status_code == 429:
            raise RateLimited(f"Rate limited by Meta (code {code}): {message}", _retry_after(response))
        if response.status_code >= 500 or error.get("is_transient"):
            raise ProviderUnavailable(f"Meta answered {response.status_code}: {message}")
        raise PlatformRefused(f"meta_{code or response.status_code}", message)


def _since(items: list[dict], text: str, since: datetime, text_key: str, time_key: str) -> dict | None:
    since = since - CLOCK_SKEW
    for item in items:
        created = item.get(time_key)
        created = parse_datetime(created) if isinstance(created, str) else None
        if item.get(text_key, "") == text and (created is None or created >= since):
            return item
    return None


class FacebookPageAdapter(Adapter):
    platform = "facebook_page"

    def publish(self, *, token: str, account_id: str, content: Content) -> Post:
        data = {"message": content.text, "access_token": token}
        if content.link:
            data["link"] = content.link
        with self.client() as client:
            body = MetaGraph.answer(_send(client, "POST", f"{MetaGraph.base()}/{account_id}/feed", data=data))
        return Post(body["id"], f"https://www.facebook.com/{body['id']}")

    def find_post(self, *, token: str, account_id: str, content: Content, since: datetime) -> Post | None:
        params = {"fields": "id,message,created_time", "limit": LOOKUP_LIMIT, "access_token": token}
        with self.client() as client:
            body = MetaGraph.answer(_send(client, "GET", f"{MetaGraph.base()}/{account_id}/feed", params=params))
        item = _since(body.get("data") or [], content.text, since, "message", "created_time")
        return Post(item["id"], f"https://www.facebook.com/{item['id']}") if item else None


class InstagramAdapter(Adapter):
    platform = "instagram"

    def publish(self, *, token: str, account_id: str, content: Content) -> Post:
        media = {"caption": content.text, "access_token": token}
        if content.kind == "video":
            media |= {"media_type": "REELS", "video_url": content.media_url}
        else:
            media["image_url"] = content.media_url
        base = f"{MetaGraph.base()}/{account_id}"
        with self.client() as client:
            container = MetaGraph.answer(_send(client, "POST", f"{base}/media", data=media))
            body = MetaGraph.answer(
                _send(
                    client,
                    "POST",
                    f"{base}/media_publish",
                    data={"creation_id": container["id"], "access_token": token},
                )
            )
            # The media's permalink is a field of the media (a read, not a guess at the URL).
            fields = MetaGraph.answer(
                _send(
                    client,
                    "GET",
                    f"{MetaGraph.base()}/{body['id']}",
                    params={"fields": "permalink", "access_token": token},
                )
            )
        return Post(body["id"], fields.get("permalink", ""))

    def find_post(self, *, token: str, account_id: str, content: Content, since: datetime) -> Post | None:
        params = {"fields": "id,caption,timestamp,permalink", "limit": LOOKUP_LIMIT, "access_token": token}
        with self.client() as client:
            body = MetaGraph.answer(_send(client, "GET", f"{MetaGraph.base()}/{account_id}/media", params=params))
        item = _since(body.get("data") or [], content.text, since, "caption", "timestamp")
        return Post(item["id"], item.get("permalink", "")) if item else None


class LinkedInAdapter(Adapter):
    platform = "linkedin"

    @staticmethod
    def headers(token: str) -> dict[str, str]:
        return {
            "Authorization": f"Bearer {token}",
            "LinkedIn-Version": settings.LINKEDIN_API_VERSION,
            "X-Restli-Protocol-Version": "2.0.0",
        }

    @staticmethod
    def check(response: httpx.Response) -> httpx.Response:
        if response.is_success:
            return response
        try:
            message = response.json().get("message") or f"HTTP {response.status_code}"
        except ValueError:
            message = f"HTTP {response.status_code}"
        if response.status_code == 401:
            raise TokenExpired(message)
        if response.status_code == 429:
            raise RateLimited(f"Rate limited by LinkedIn: {message}", _retry_after(response))
        if response.status_code >= 500:
            raise ProviderUnavailable(f"LinkedIn answered {response.status_code}: {message}")
        raise PlatformRefused(f"linkedin_{response.status_code}", message)

    def publish(self, *, token: str, account_id: str, content: Content) -> Post:
        body = {
            "author": account_id,
            "commentary": content.text,
            "visibility": "PUBLIC",
            "distribution": {
                "feedDistribution": "MAIN_FEED",
                "targetEntities": [],
                "thirdPartyDistributionChannels": [],
            },
            "lifecycleState": "PUBLISHED",
            "isReshareDisabledByAuthor": False,
        }
        if content.link:
            body["content"] = {"article": {"source": content.link, "title": content.text[:200] or content.link}}
        url = f"{settings.LINKEDIN_API_BASE_URL.rstrip('/')}/rest/posts"
        with self.client() as client:
            response = self.check(_send(client, "POST", url, json=body, headers=self.headers(token)))
        urn = response.headers.get("x-restli-id", "")
        if not urn:
            raise ProviderUnavailable("LinkedIn accepted the post but named no id.")
        return Post(urn, f"https://www.linkedin.com/feed/update/{urn}/")

    def find_post(self, *, token: str, account_id: str, content: Content, since: datetime) -> Post | None:
        url = f"{settings.LINKEDIN_API_BASE_URL.rstrip('/')}/rest/posts"
        params = {"author": account_id, "q": "author", "count": LOOKUP_LIMIT, "sortBy": "LAST_MODIFIED"}
        headers = self.headers(token) | {"X-RestLi-Method": "FINDER"}
        with self.client() as client:
            elements = (
                self.check(_send(client, "GET", url, params=params, headers=headers)).json().get("elements") or []
            )
        since_ms = (since - CLOCK_SKEW).timestamp() * 1000
        for item in elements:
            if item.get("commentary", "") == content.text and item.get("createdAt", since_ms) >= since_ms:
                return Post(item["id"], f"https://www.linkedin.com/feed/update/{item['id']}/")
        return None


ADAPTERS: dict[str, Adapter] = {a.platform: a for a in (FacebookPageAdapter(), InstagramAdapter(), LinkedInAdapter())}


def social_adapter(platform: str) -> Adapter:
    return ADAPTERS[platform]
