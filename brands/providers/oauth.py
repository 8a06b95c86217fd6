"""Connecting a brand's social accounts: the platforms' OAuth 2.0 authorization-code flow and token refresh
(docs/decisions.md#connecting-accounts-oauth, docs/decisions.md#token-refresh-and-health).

`SOCIAL_OAUTH_PROVIDER=platforms` talks to the platforms, over httpx, with their own request shapes:

- Meta (`facebook_page`, and the Instagram professional accounts of those pages): the dialog
  `https://www.facebook.com/{version}/dialog/oauth`; the code is exchanged with `GET /{version}/oauth/access_token`
  (`client_id`, `redirect_uri`, `client_secret`, `code`), the short-lived user token for a long-lived one
  (`grant_type=fb_exchange_token`), then `GET /me/accounts` lists the pages with their page tokens (a page token
  obtained from a long-lived user token does not expire: no refresh, no expiry) and their
  `instagram_business_account`.
- LinkedIn (`linkedin`): the dialog `https://www.linkedin.com/oauth/v2/authorization`; the code is exchanged with
  `POST /oauth/v2/accessToken` (form: `grant_type=authorization_code`, `code`, `redirect_uri`, `client_id`,
  `client_secret`) → `access_token`, `expires_in` (60 days), `refresh_token` (when the app has programmatic refresh);
  the member comes from `GET /v2/userinfo` (OpenID Connect: `sub` → `urn:li:person:{sub}`). Refresh:
  `grant_type=refresh_token`; `invalid_grant` means the grant is gone.

`local` (the default) runs the same flow against this server: its authorization URL is our own consent endpoint,
which sends the browser straight back with a code; the accounts it connects are `simulated` (they post nowhere,
publications through them go to the configured publishing provider), and `check --deploy` refuses it unless a demo
deployment opts in. Tokens are never logged.
"""

from __future__ import annotations

import secrets
from dataclasses import dataclass
from datetime import datetime, timedelta
from urllib.parse import urlencode

import httpx
from django.conf import settings
from django.utils import timezone

from brands.providers.social import MetaGraph, PlatformRefused, RateLimited, TokenExpired, _retry_after, _send
from core.http.errors import ProviderUnavailable

LOCAL_CODE_PREFIX = "local-code-"
META_SCOPES = "pages_show_list,pages_read_engagement,pages_manage_posts,instagram_basic,instagram_content_publish"
LINKEDIN_SCOPES = "openid profile w_member_social"


class GrantRevoked(Exception):
    """The platform refused the code or the refresh token (`invalid_grant`, Meta OAuthException): reconnect."""


@dataclass(frozen=True)
class Grant:
    """One account a consent gave access to, with its tokens (in memory only)."""

    platform: str
    account_id: str
    account_name: str
    access_token: str
    refresh_token: str = ""
    expires_at: datetime | None = None
    simulated: bool = False

    def __repr__(self) -> str:  # never the tokens
        return f"<Grant {self.platform} {self.account_id}>"


@dataclass(frozen=True)
class Tokens:
    access_token: str
    refresh_token: str
    expires_at: datetime | None

    def __repr__(self) -> str:
        return "<Tokens>"


def _expiry(seconds) -> datetime | None:
    return timezone.now() + timedelta(seconds=int(seconds)) if seconds else None


class OAuthClient:
    name = ""
    simulated = False

    def __init__(self, transport: httpx.BaseTransport | None = None):
        self.transport = transport  # tests give an httpx.MockTransport (tests/support/social_platforms.py)

    def client(self) -> httpx.Client:
        return httpx.Client(timeout=settings.SOCIAL_HTTP_TIMEOUT_SECONDS, transport=self.transport)


class MetaOAuth(OAuthClient):
    name = "meta"

    def authorization_url(self, *, state: str, redirect_uri: str, consent_url: str = "") -> str:
        query = urlencode(
            {
                "client_id": settings.META_APP_ID,
                "redirect_uri": redirect_uri,
                "state": state,
                "scope": META_SCOPES,
                "response_type": "code",
            }
        )
        return f"{settings.META_OAUTH_DIALOG_URL.rstrip('/')}/{settings.META_GRAPH_VERSION}/dialog/oauth?{query}"

    @staticmethod
    def answer(response: httpx.Response) -> dict:
        try:
            return MetaGraph.answer(response)
        except PlatformRefused as exc:  # a bad, used or expired code: OAuthException code 100
            raise GrantRevoked(exc.message) from exc
        except TokenExpired as exc:  # code 190: the user token was refused
            raise GrantRevoked(str(exc)) from exc

    def exchange(self, *, code: str, redirect_uri: str) -> list[Grant]:
        base = MetaGraph.base()
        app = {"client_id": settings.META_APP_ID, "client_secret": settings.META_APP_SECRET}
        with self.client() as client:
            short = self.answer(
                _send(
                    client,
                    "GET",
                    f"{base}/oauth/access_token",
                    params=app | {"redirect_uri": redirect_uri, "code": code},
                )
            )
            long = self.answer(
                _send(
                    client,
                    "GET",
                    f"{base}/oauth/access_token",
                    params=app | {"grant_type": "fb_exchange_token", "fb_exchange_token": short["access_token"]},
                )
            )
            pages = self.answer(
                _send(
                    client,
                    "GET",
                    f"{base}/me/accounts",
                    params={
                        "fields": "id,name,access_token,instagram_business_account{id,username}",
                        "access_token": long["access_token"],
                    },
                )
            )
        grants = []
        for page in pages.get("data") or []:
            # Page tokens from a long-lived user token have no expiry (docs/decisions.md#token-refresh-and-health).
            grants.append(Grant("facebook_page", page["id"], page.get("name", ""), page["access_token"]))
            ig = page.get("instagram_business_account")
            if ig:  # the Instagram Graph API is called with the page's token
                grants.append(Grant("instagram", ig["id"], ig.get("username", ""), page["access_token"]))
        return grants

    def refresh(self, *, platform: str, refresh_token: str) -> Tokens:
        raise GrantRevoked("Meta page tokens are not refreshed: connect the account again.")


class LinkedInOAuth(OAuthClient):
    name = "linkedin"

    def authorization_url(self, *, state: str, redirect_uri: str, consent_url: str = "") -> str:
        query = urlencode(
            {
                "response_type": "code",
                "client_id": settings.LINKEDIN_CLIENT_ID,
                "redirect_uri": redirect_uri,
                "state": state,
                "scope": LINKEDIN_SCOPES,
            }
        )
        return f"{settings.LINKEDIN_OAUTH_BASE_URL.rstrip('/')}/oauth/v2/authorization?{query}"

    @staticmethod
    def answer(response: httpx.Response) -> dict:
        try:
            body = response.json()
        except ValueError:
            body = {}
        if response.is_success:
            return body
        message = body.get("error_description") or body.get("message") or f"HTTP {response.status_code}"
        if response.status_code == 429:
            raise RateLimited(f"Rate limited by LinkedIn: {message}", _retry_after(response))
        if response.status_code >= 500:
            raise ProviderUnavailable(f"LinkedIn answered {response.status_code}: {message}")
        if body.get("error") in ("invalid_grant", "invalid_request") or response.status_code == 401:
            raise GrantRevoked(message)
        raise PlatformRefused(f"linkedin_{response.status_code}", message)

    def _token(self, client: httpx.Client, form: dict) -> Tokens:
        form |= {"client_id": settings.LINKEDIN_CLIENT_ID, "client_secret": settings.LINKEDIN_CLIENT_SECRET}
        body = self.answer(
            _send(client, "POST", f"{settings.LINKEDIN_OAUTH_BASE_URL.rstrip('/')}/oauth/v2/accessToken", data=form)
        )
        return Tokens(body["access_token"], body.get("refresh_token", ""), _expiry(body.get("expires_in")))

    def exchange(self, *, code: str, redirect_uri: str) -> list[Grant]:
        with self.client() as client:
            tokens = self._token(
                client, {"grant_type": "authorization_code", "code": code, "redirect_uri": redirect_uri}
            )
            me = self.answer(
                _send(
                    client,
                    "GET",
                    f"{settings.LINKEDIN_API_BASE_URL.rstrip('/')}/v2/userinfo",
                    headers={"Authorization": f"Bearer {tokens.access_token}"},
                )
            )
        return [
            Grant(
                "linkedin",
                f"urn:li:person:{me['sub']}",
                me.get("name", ""),
                tokens.access_token,
                tokens.refresh_token,
                tokens.expires_at,
            )
        ]

    def refresh(self, *, platform: str, refresh_token: str) -> Tokens:
        with self.client() as client:
            tokens = self._token(client, {"grant_type": "refresh_token", "refresh_token": refresh_token})
        # LinkedIn may answer without a new refresh token: the old one stays valid until its own expiry.
        return Tokens(tokens.access_token, tokens.refresh_token or refresh_token, tokens.expires_at)


class LocalOAuth(OAuthClient):
    """This server's stand-in for both platforms (see the module docstring)."""

    name = "local"
    simulated = True

    def authorization_url(self, *, state: str, redirect_uri: str, consent_url: str = "") -> str:
        return f"{consent_url}?{urlencode({'state': state})}"

    def exchange(self, *, code: str, redirect_uri: str, platform: str = "", brand_id: str = "") -> list[Grant]:
        if not code.startswith(LOCAL_CODE_PREFIX):
            raise GrantRevoked("The local provider did not issue this code.")
        account = f"local-{platform}-{str(brand_id)[:8]}"
        account_id = f"urn:li:person:{account}" if platform == "linkedin" else account
        return [
            Grant(
                platform,
                account_id,
                f"Simulated {platform} account (local provider)",
                f"local-access-{secrets.token_urlsafe(16)}",
                f"local-refresh-{secrets.token_urlsafe(16)}",
                _expiry(settings.SOCIAL_OAUTH_LOCAL_TOKEN_LIFETIME_SECONDS),
                simulated=True,
            )
        ]

    def refresh(self, *, platform: str, refresh_token: str) -> Tokens:
        if not refresh_token.startswith("local-refresh-"):
            raise GrantRevoked("The local provider did not issue this refresh token.")
        return Tokens(
            f"local-access-{secrets.token_urlsafe(16)}",
            refresh_token,
            _expiry(settings.SOCIAL_OAUTH_LOCAL_TOKEN_LIFETIME_SECONDS),
        )


# The OAuth client of each connected platform when SOCIAL_OAUTH_PROVIDER=platforms; tests swap in transports.
CLIENTS: dict[str, OAuthClient] = {"meta": MetaOAuth(), "linkedin": LinkedInOAuth(), "local": LocalOAuth()}
CONSENT_OF = {"facebook_page": "meta", "instagram": "meta", "linkedin": "linkedin"}


def oauth_client(platform: str, *, simulated: bool | None = None) -> OAuthClient:
    """The client for a platform: the local stand-in when SOCIAL_OAUTH_PROVIDER is `local` (or for a simulated
    connection), else the platform's."""
    if simulated if simulated is not None else settings.SOCIAL_OAUTH_PROVIDER == "local":
        return CLIENTS["local"]
    return CLIENTS[CONSENT_OF[platform]]
