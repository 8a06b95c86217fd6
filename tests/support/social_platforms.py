"""Local stand-ins of the Meta Graph API (Facebook Pages, Instagram) and LinkedIn's Posts API, as
httpx.MockTransport handlers with the platforms' real request and answer shapes. They store what they
accept, so a test sees whether a post was made twice, and they can be told to fail the next call the
way the platform does: `token_expired` (Meta error code 190 / LinkedIn 401), `rate_limited` (Meta code 4
/ LinkedIn 429 with Retry-After), `lose_answer` (the post is stored, then the answer times out)."""

from __future__ import annotations

import itertools
import json
from datetime import UTC, datetime
from urllib.parse import parse_qs

import httpx

from brands.providers.social import FacebookPageAdapter, InstagramAdapter, LinkedInAdapter


class FakePlatform:
    def __init__(self):
        self.requests: list[httpx.Request] = []
        self.posts: list[dict] = []  # what the platform holds, newest last
        self.containers: dict[str, dict] = {}
        self.fail_next: list[str] = []
        self.ids = itertools.count(1)

    def transport(self) -> httpx.MockTransport:
        return httpx.MockTransport(self.handle)

    def writes(self) -> list[httpx.Request]:
        return [r for r in self.requests if r.method == "POST"]

    def handle(self, request: httpx.Request) -> httpx.Response:
        self.requests.append(request)
        failure = self.fail_next.pop(0) if self.fail_next and request.method == "POST" else None
        if failure in ("token_expired", "rate_limited"):
            return self.failure(failure)
        response = self.answer(request)
        if failure == "lose_answer":
            raise httpx.ReadTimeout("timed out after the platform stored the post", request=request)
        return response

    @staticmethod
    def now() -> str:
        return datetime.now(UTC).strftime("%Y-%m-%dT%H:%M:%S+0000")


class FakeMetaGraph(FakePlatform):
    def failure(self, kind: str) -> httpx.Response:
        code, message = (
            (190, "Error validating access token: Session has expired")
            if kind == "token_expired"
            else (
                4,
                "(#4) Application request limit reached",
            )
        )
        status = 401 if code == 190 else 400
        error = {"message": message, "type": "OAuthException", "code": code, "fbtrace_id": "AbCdEf"}
        return httpx.Response(status, json={"error": error})

    def answer(self, request: httpx.Request) -> httpx.Response:
        parts = request.url.path.strip("/").split("/")  # v21.0, node, edge?
        form = {k: v[0] for k, v in parse_qs(request.content.decode()).items()} if request.method == "POST" else {}
        token = form.get("access_token") or request.url.params.get("access_token")
        if not token:
            return httpx.Response(400, json={"error": {"message": "An access token is required", "code": 104}})
        node, edge = parts[1], parts[2] if len(parts) > 2 else ""
        if request.method == "POST" and edge == "feed":
            post = {"id": f"{node}_{next(self.ids)}", "message": form.get("message", ""), "link": form.get("link")}
            self.posts.append(post | {"created_time": self.now()})
            return httpx.Response(200, json={"id": post["id"]})
        if request.method == "POST" and edge == "media":
            container = str(next(self.ids) + 17_900_000)
            self.containers[container] = form
            return httpx.Response(200, json={"id": container})
        if request.method == "POST" and edge == "media_publish":
            form_of = self.containers.pop(form["creation_id"])
            media_id = str(next(self.ids) + 18_000_000)
            self.posts.append(
                {
                    "id": media_id,
                    "caption": form_of.get("caption", ""),
                    "timestamp": self.now(),
                    "permalink": f"https://www.instagram.com/p/{media_id}/",
                }
            )
            return httpx.Response(200, json={"id": media_id})
        if request.method == "GET" and edge in ("feed", "media"):
            fields = request.url.params["fields"].split(",")
            data = [{k: p[k] for k in fields if k in p} for p in reversed(self.posts)]
            return httpx.Response(200, json={"data": data, "paging": {}})
        if request.method == "GET" and not edge:
            post = next(p for p in self.posts if p["id"] == node)
            return httpx.Response(200, json={"permalink": post.get("permalink", ""), "id": node})
        return httpx.Response(400, json={"error": {"message": "Unsupported request", "code": 100}})


class FakeLinkedIn(FakePlatform):
    def failure(self, kind: str) -> httpx.Response:
        if kind == "token_expired":
            return httpx.Response(
                401,
                json={
                    "status": 401,
                    "serviceErrorCode": 65601,
                    "code": "REVOKED_ACCESS_TOKEN",
                    "message": "The token used in the request has been revoked by the user",
                },
            )
        return httpx.Response(429, headers={"Retry-After": "120"}, json={"status": 429, "message": "Too Many Requests"})

    def answer(self, request: httpx.Request) -> httpx.Response:
        if request.headers.get("X-Restli-Protocol-Version") != "2.0.0" or not request.headers.get("LinkedIn-Version"):
            return httpx.Response(400, json={"status": 400, "message": "Missing LinkedIn-Version"})
        if request.url.path != "/rest/posts":
            return httpx.Response(404, json={"status": 404, "message": "Not found"})
        if request.method == "POST":
            body = json.loads(request.content)
            urn = f"urn:li:share:{7_100_000 + next(self.ids)}"
            self.posts.append(
                {
                    "id": urn,
                    "author": body["author"],
                    "commentary": body["commentary"],
                    "createdAt": int(datetime.now(UTC).timestamp() * 1000),
                }
            )
            return httpx.Response(201, headers={"x-restli-id": urn})
        author = request.url.params["author"]
        elements = [p for p in reversed(self.posts) if p["author"] == author]
        return httpx.Response(200, json={"elements": elements, "paging": {"start": 0, "count": 10}})


def install(monkeypatch, platform: str) -> FakePlatform:
    """The platform's stand-in, behind the adapter the publisher uses for it."""
    from brands.providers import social

    fake = FakeLinkedIn() if platform == "linkedin" else FakeMetaGraph()
    adapter = {"facebook_page": FacebookPageAdapter, "instagram": InstagramAdapter, "linkedin": LinkedInAdapter}[
        platform
    ]
    monkeypatch.setitem(social.ADAPTERS, platform, adapter(transport=fake.transport()))
    return fake
