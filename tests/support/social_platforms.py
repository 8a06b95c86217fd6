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


class FakeOAuth:
    """The platforms' OAuth endpoints (Meta's `oauth/access_token` and `/me/accounts`, LinkedIn's
    `oauth/v2/accessToken` and `/v2/userinfo`), with their real answer and error shapes. `codes` are the codes the
    consent issued (each works once), `refresh_tokens` the refresh tokens it will take; `fail_next` makes the next
    call answer `rate_limited` (429)."""

    def __init__(self):
        self.requests: list[httpx.Request] = []
        self.codes: set[str] = {"good-code"}
        self.refresh_tokens: set[str] = {"AQW-refresh-1"}
        self.fail_next: list[str] = []
        self.ids = itertools.count(1)

    def transport(self) -> httpx.MockTransport:
        return httpx.MockTransport(self.handle)

    def handle(self, request: httpx.Request) -> httpx.Response:
        self.requests.append(request)
        if self.fail_next and self.fail_next.pop(0) == "rate_limited":
            return self.rate_limited()
        return self.answer(request)


class FakeMetaOAuth(FakeOAuth):
    PAGES = [
        {
            "id": "104612345",
            "name": "Acme Outdoor",
            "instagram_business_account": {"id": "17841400001", "username": "acme"},
        },
        {"id": "104699999", "name": "Acme Outlet"},
    ]

    @staticmethod
    def rate_limited() -> httpx.Response:
        error = {"message": "(#4) Application request limit reached", "type": "OAuthException", "code": 4}
        return httpx.Response(400, json={"error": error})

    def answer(self, request: httpx.Request) -> httpx.Response:
        params = request.url.params
        path = request.url.path.strip("/").split("/", 1)[1]  # after the version
        if request.method == "GET" and path == "oauth/access_token":
            if params.get("client_secret") != "meta-secret":
                return httpx.Response(400, json={"error": {"message": "Error validating client secret.", "code": 1}})
            if params.get("grant_type") == "fb_exchange_token":
                token = params["fb_exchange_token"]
                return httpx.Response(
                    200, json={"access_token": f"{token}-long", "token_type": "bearer", "expires_in": 5183944}
                )
            if params.get("code") not in self.codes or not params.get("redirect_uri"):
                error = {
                    "message": "This authorization code has been used.",
                    "type": "OAuthException",
                    "code": 100,
                    "error_subcode": 36009,
                    "fbtrace_id": "AbCdEf",
                }
                return httpx.Response(400, json={"error": error})
            self.codes.discard(params["code"])
            return httpx.Response(
                200, json={"access_token": "EAAG-user-short", "token_type": "bearer", "expires_in": 5400}
            )
        if request.method == "GET" and path == "me/accounts":
            if params.get("access_token") != "EAAG-user-short-long":
                return httpx.Response(400, json={"error": {"message": "Invalid OAuth access token.", "code": 190}})
            data = [page | {"access_token": f"EAAG-page-{page['id']}", "category": "Brand"} for page in self.PAGES]
            return httpx.Response(200, json={"data": data, "paging": {"cursors": {"before": "a", "after": "b"}}})
        return httpx.Response(400, json={"error": {"message": "Unsupported get request.", "code": 100}})


class FakeLinkedInOAuth(FakeOAuth):
    @staticmethod
    def rate_limited() -> httpx.Response:
        return httpx.Response(429, headers={"Retry-After": "60"}, json={"status": 429, "message": "Too Many Requests"})

    def answer(self, request: httpx.Request) -> httpx.Response:
        if request.method == "POST" and request.url.path == "/oauth/v2/accessToken":
            if request.headers.get("content-type") != "application/x-www-form-urlencoded":
                return httpx.Response(400, json={"error": "invalid_request", "error_description": "form expected"})
            form = {k: v[0] for k, v in parse_qs(request.content.decode()).items()}
            if form.get("client_secret") != "li-secret":
                return httpx.Response(
                    401, json={"error": "invalid_client", "error_description": "Client authentication failed"}
                )
            if (
                form.get("grant_type") == "authorization_code"
                and form.get("code") in self.codes
                and form.get("redirect_uri")
            ):
                self.codes.discard(form["code"])
            elif form.get("grant_type") == "refresh_token" and form.get("refresh_token") in self.refresh_tokens:
                pass
            elif form.get("grant_type") == "refresh_token":
                return httpx.Response(
                    400,
                    json={
                        "error": "invalid_grant",
                        "error_description": "The provided authorization grant or refresh token is invalid, expired or revoked.",  # noqa: E501
                    },
                )
            else:
                return httpx.Response(
                    400,
                    json={
                        "error": "invalid_request",
                        "error_description": "Unable to retrieve access token: authorization code not found",
                    },
                )
            n = next(self.ids)
            return httpx.Response(
                200,
                json={
                    "access_token": f"AQV-access-{n}",
                    "expires_in": 5184000,
                    "refresh_token": f"AQW-refresh-{n}",
                    "refresh_token_expires_in": 31536000,
                    "scope": "openid,profile,w_member_social",
                },
            )
        if request.method == "GET" and request.url.path == "/v2/userinfo":
            if not request.headers.get("Authorization", "").startswith("Bearer AQV-access-"):
                return httpx.Response(401, json={"status": 401, "message": "Invalid access token"})
            return httpx.Response(
                200, json={"sub": "782bbtaQ", "name": "Ada Lovelace", "given_name": "Ada", "locale": {"country": "US"}}
            )
        return httpx.Response(404, json={"status": 404, "message": "Not found"})


def install_oauth(monkeypatch, settings, name: str) -> FakeOAuth:
    """The platform's OAuth stand-in behind the client the connection flow uses (SOCIAL_OAUTH_PROVIDER=platforms)."""
    from brands.providers import oauth

    settings.SOCIAL_OAUTH_PROVIDER = "platforms"
    settings.META_APP_ID, settings.META_APP_SECRET = "meta-app", "meta-secret"
    settings.LINKEDIN_CLIENT_ID, settings.LINKEDIN_CLIENT_SECRET = "li-app", "li-secret"
    fake = FakeLinkedInOAuth() if name == "linkedin" else FakeMetaOAuth()
    client = oauth.LinkedInOAuth if name == "linkedin" else oauth.MetaOAuth
    monkeypatch.setitem(oauth.CLIENTS, name, client(transport=fake.transport()))
    return fake
