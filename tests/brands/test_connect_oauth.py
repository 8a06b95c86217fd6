"""Connecting a brand's social accounts through OAuth (docs/decisions.md#connecting-accounts-oauth), against the
local stand-in and stand-ins of Meta's and LinkedIn's OAuth endpoints with their real request and answer shapes
(tests/support/social_platforms.py); token refresh and health (docs/decisions.md#token-refresh-and-health)."""

from __future__ import annotations

import json
from datetime import timedelta
from urllib.parse import parse_qs, urlparse

import pytest
from django.core import signing
from django.utils import timezone

from brands.models import ConnectedAccount
from brands.services.connections import STATE_SALT, connection_store, connections_refresh_due
from tests.brands.factories import BrandFactory
from tests.conftest import HttpsAPIClient
from tests.support.social_platforms import install_oauth

pytestmark = pytest.mark.django_db

CALLBACK = "/api/v1/connected-accounts/oauth/callback"


@pytest.fixture
def brand(alice):
    return BrandFactory(owner=alice, name="Acme")


def authorize(client, brand, platform: str):
    response = client.post(
        f"/api/v1/brands/{brand.id}/connected-accounts/authorize", {"platform": platform}, format="json"
    )
    assert response.status_code == 200, response.content
    return response.json()


def callback(state: str, code: str = "good-code", **more):
    return HttpsAPIClient().get(CALLBACK, {"code": code, "state": state, **more})


def stored(brand) -> dict[tuple[str, str], ConnectedAccount]:
    return {(c.platform, c.account_id): c for c in ConnectedAccount.objects.filter(brand=brand)}


def no_token_in(text: str, *tokens: str) -> bool:
    return not any(token and token in text for token in tokens)


@pytest.mark.parametrize("platform", ["facebook_page", "linkedin"])
def test_the_local_provider_runs_the_whole_flow_through_its_own_consent_page(alice_api, brand, platform):
    started = authorize(alice_api, brand, platform)
    assert started["simulated"] is True
    url = urlparse(started["authorization_url"])
    assert url.path == "/api/v1/connected-accounts/oauth/local-consent"

    consent = HttpsAPIClient().get(url.path, parse_qs(url.query) | {})
    assert consent.status_code == 302
    back = urlparse(consent["Location"])
    assert back.path == CALLBACK
    done = HttpsAPIClient().get(back.path, {k: v[0] for k, v in parse_qs(back.query).items()})

    assert done.status_code == 200, done.content
    body = done.json()
    assert body["simulated"] is True and body["brand_id"] == str(brand.id)
    [account] = body["connected_accounts"]
    assert account["platform"] == platform and account["simulated"] is True and account["health"] == "healthy"
    row = ConnectedAccount.objects.get(id=account["id"])
    assert row.access_token.startswith("local-access-") and row.token_expires_at is not None
    assert no_token_in(done.content.decode(), row.access_token, row.refresh_token)
    listed = alice_api.get(f"/api/v1/brands/{brand.id}/connections").content.decode()
    assert no_token_in(listed, row.access_token, row.refresh_token, row.access_token_encrypted)
    assert no_token_in(repr(row) + str(row), row.access_token, row.refresh_token)


def test_meta_code_is_exchanged_for_long_lived_page_tokens_with_the_graph_api_shapes(
    monkeypatch, settings, alice_api, brand
):
    fake = install_oauth(monkeypatch, settings, "meta")
    started = authorize(alice_api, brand, "facebook_page")
    dialog = urlparse(started["authorization_url"])
    query = {k: v[0] for k, v in parse_qs(dialog.query).items()}
    assert (dialog.netloc, dialog.path) == ("www.facebook.com", f"/{settings.META_GRAPH_VERSION}/dialog/oauth")
    assert query["client_id"] == "meta-app" and query["state"] == started["state"] and started["simulated"] is False
    assert query["redirect_uri"].endswith(CALLBACK)

    done = callback(started["state"])

    assert done.status_code == 200, done.content
    short, long, pages = fake.requests
    assert short.url.path == f"/{settings.META_GRAPH_VERSION}/oauth/access_token"
    assert dict(short.url.params) == {
        "client_id": "meta-app",
        "client_secret": "meta-secret",
        "redirect_uri": query["redirect_uri"],
        "code": "good-code",
    }
    assert long.url.params["grant_type"] == "fb_exchange_token"
    assert long.url.params["fb_exchange_token"] == "EAAG-user-short"
    assert pages.url.path.endswith("/me/accounts")
    accounts = stored(brand)
    assert set(accounts) == {
        ("facebook_page", "104612345"),
        ("instagram", "17841400001"),
        ("facebook_page", "104699999"),
    }
    page = accounts["facebook_page", "104612345"]
    assert page.access_token == "EAAG-page-104612345" and page.token_expires_at is None and not page.simulated
    assert accounts["instagram", "17841400001"].access_token == "EAAG-page-104612345"
    assert no_token_in(done.content.decode(), "EAAG-page-104612345", "EAAG-user-short")


def test_linkedin_code_is_exchanged_with_a_form_post_and_the_member_urn_stored(monkeypatch, settings, alice_api, brand):
    fake = install_oauth(monkeypatch, settings, "linkedin")
    started = authorize(alice_api, brand, "linkedin")
    dialog = urlparse(started["authorization_url"])
    assert (dialog.netloc, dialog.path) == ("www.linkedin.com", "/oauth/v2/authorization")
    assert "w_member_social" in parse_qs(dialog.query)["scope"][0]

    done = callback(started["state"])

    assert done.status_code == 200, done.content
    token, me = fake.requests
    form = {k: v[0] for k, v in parse_qs(token.content.decode()).items()}
    assert token.method == "POST" and str(token.url) == "https://www.linkedin.com/oauth/v2/accessToken"
    assert form == {
        "grant_type": "authorization_code",
        "code": "good-code",
        "redirect_uri": parse_qs(dialog.query)["redirect_uri"][0],
        "client_id": "li-app",
        "client_secret": "li-secret",
    }
    assert me.headers["Authorization"] == "Bearer AQV-access-1"
    [account] = stored(brand).values()
    assert (account.platform, account.account_id, account.account_name) == (
        "linkedin",
        "urn:li:person:782bbtaQ",
        "Ada Lovelace",
    )
    assert (account.access_token, account.refresh_token) == ("AQV-access-1", "AQW-refresh-1")
    assert timedelta(days=59) < account.token_expires_at - timezone.now() <= timedelta(days=60)
    assert no_token_in(done.content.decode(), "AQV-access-1", "AQW-refresh-1")


def _forged(alice, brand, **change) -> str:
    data = {"u": str(alice.pk), "b": str(brand.id), "p": "linkedin", "r": "https://testserver" + CALLBACK, "n": "x"}
    return signing.dumps(data | change, salt=STATE_SALT)


@pytest.mark.parametrize(
    ("case", "code"),
    [
        ("tampered", "oauth_state_invalid"),
        ("expired", "oauth_state_expired"),
        ("replayed", "oauth_state_used"),
        ("unknown_nonce", "oauth_state_used"),
        ("refused_code", "oauth_code_refused"),
        ("denied", "oauth_denied"),
    ],
)
def test_a_bad_state_or_code_is_a_400_and_stores_nothing(monkeypatch, settings, alice, alice_api, brand, case, code):
    install_oauth(monkeypatch, settings, "linkedin")
    state = authorize(alice_api, brand, "linkedin")["state"]
    params = {}
    if case == "tampered":
        state = state[:-3] + ("AAA" if not state.endswith("AAA") else "BBB")
    elif case == "expired":
        settings.SOCIAL_OAUTH_STATE_MAX_AGE_SECONDS = -1
    elif case == "replayed":
        assert callback(state).status_code == 200
        ConnectedAccount.objects.all().delete()
    elif case == "unknown_nonce":  # signed by us, but never issued: no nonce in the cache
        state = _forged(alice, brand)
    elif case == "refused_code":
        params["code"] = "used-or-made-up"
    elif case == "denied":
        params = {"code": "", "error": "access_denied", "error_description": "The user cancelled"}

    response = callback(state, **params) if params else callback(state)

    assert response.status_code == 400, response.content
    assert response.json()["code"] == code
    assert not ConnectedAccount.objects.exists()


def test_a_rate_limit_at_the_exchange_is_a_503_with_nothing_stored(monkeypatch, settings, alice_api, brand):
    fake = install_oauth(monkeypatch, settings, "linkedin")
    fake.fail_next.append("rate_limited")
    response = callback(authorize(alice_api, brand, "linkedin")["state"])

    assert response.status_code == 503
    assert response.json()["code"] == "rate_limited"
    assert not ConnectedAccount.objects.exists()


def test_only_the_brand_owner_authorizes_and_the_callback_stores_for_the_state_user(alice, bob_api, alice_api, brand):
    assert (
        bob_api.post(
            f"/api/v1/brands/{brand.id}/connected-accounts/authorize", {"platform": "linkedin"}, format="json"
        ).status_code
        == 404
    )
    state = authorize(alice_api, brand, "linkedin")["state"]
    # The callback ignores whoever's browser brings it: the account is the state's user's brand's.
    consent = HttpsAPIClient().get("/api/v1/connected-accounts/oauth/local-consent", {"state": state})
    back = urlparse(consent["Location"])
    done = bob_api.get(back.path, {k: v[0] for k, v in parse_qs(back.query).items()})
    assert done.status_code == 200
    assert ConnectedAccount.objects.get().brand_id == brand.id


def test_a_state_for_a_brand_no_longer_the_users_stores_nothing(alice, bob, alice_api, brand):
    state = authorize(alice_api, brand, "linkedin")["state"]
    brand.owner = bob
    brand.save(update_fields=["owner"])
    consent = HttpsAPIClient().get("/api/v1/connected-accounts/oauth/local-consent", {"state": state})
    back = urlparse(consent["Location"])

    response = HttpsAPIClient().get(back.path, {k: v[0] for k, v in parse_qs(back.query).items()})

    assert response.status_code == 404
    assert not ConnectedAccount.objects.exists()


# --- Refresh and health ---------------------------------------------------------------------------------------


def _linkedin(alice, brand, *, refresh: str = "AQW-refresh-1", expires_in: timedelta = timedelta(days=2)):
    return connection_store(
        owner=alice,
        brand_id=brand.id,
        platform="linkedin",
        account_id="urn:li:person:782bbtaQ",
        account_name="Ada",
        access_token="AQV-old",
        refresh_token=refresh,
        token_expires_at=timezone.now() + expires_in,
    )


def test_the_beat_refreshes_a_token_expiring_within_the_window_with_the_refresh_grant(
    monkeypatch, settings, alice, brand
):
    fake = install_oauth(monkeypatch, settings, "linkedin")
    soon = _linkedin(alice, brand)
    later = _linkedin(alice, BrandFactory(owner=alice), expires_in=timedelta(days=30))

    assert connections_refresh_due() == {"refreshed": 1, "expired": 0, "expiring": 0, "failed": 0}

    [request] = fake.requests
    form = {k: v[0] for k, v in parse_qs(request.content.decode()).items()}
    assert form == {
        "grant_type": "refresh_token",
        "refresh_token": "AQW-refresh-1",
        "client_id": "li-app",
        "client_secret": "li-secret",
    }
    soon.refresh_from_db()
    assert (soon.access_token, soon.health) == ("AQV-access-1", "healthy")
    assert soon.token_expires_at > timezone.now() + timedelta(days=59)
    later.refresh_from_db()
    assert later.access_token == "AQV-old"


def test_refresh_refused_with_invalid_grant_marks_the_connection_expired(monkeypatch, settings, alice, brand):
    install_oauth(monkeypatch, settings, "linkedin")
    connection = _linkedin(alice, brand, refresh="AQW-revoked")

    assert connections_refresh_due()["expired"] == 1

    connection.refresh_from_db()
    assert connection.health == "token_expired" and "revoked" in connection.last_error
    assert connection.access_token == "AQV-old"
    assert connections_refresh_due()["expired"] == 0  # not asked again until reconnected


def test_a_rate_limited_refresh_is_left_for_the_next_run(monkeypatch, settings, alice, brand):
    fake = install_oauth(monkeypatch, settings, "linkedin")
    fake.fail_next.append("rate_limited")
    connection = _linkedin(alice, brand)

    assert connections_refresh_due()["failed"] == 1
    connection.refresh_from_db()
    assert (connection.health, connection.access_token) == ("healthy", "AQV-old")


@pytest.mark.parametrize(
    ("expires_in", "health"), [(timedelta(days=3), "expiring"), (-timedelta(hours=1), "token_expired")]
)
def test_a_token_without_refresh_token_is_marked_expiring_then_expired(alice, brand, expires_in, health):
    connection = _linkedin(alice, brand, refresh="", expires_in=expires_in)

    connections_refresh_due()

    connection.refresh_from_db()
    assert connection.health == health and "reconnect" in connection.last_error


def test_the_refresh_task_is_registered_on_the_beat(settings):
    entry = settings.CELERY_BEAT_SCHEDULE["brands.refresh_connection_tokens"]
    assert entry["task"] == "brands.tasks.refresh_connection_tokens"
    assert json.dumps(str(entry["schedule"]))


def test_a_simulated_connection_is_refreshed_by_the_local_stand_in_not_a_platform(alice, brand):
    connection = connection_store(
        owner=alice,
        brand_id=brand.id,
        platform="linkedin",
        account_id="urn:li:person:local-linkedin",
        account_name="Simulated",
        access_token="local-access-old",
        refresh_token="local-refresh-1",
        token_expires_at=timezone.now() + timedelta(days=1),
        simulated=True,
    )

    assert connections_refresh_due()["refreshed"] == 1

    connection.refresh_from_db()
    assert connection.access_token.startswith("local-access-") and connection.access_token != "local-access-old"
    assert connection.token_expires_at > timezone.now() + timedelta(days=59) and connection.health == "healthy"
