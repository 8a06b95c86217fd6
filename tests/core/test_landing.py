"""`/` is a small landing page (the admin's "View site"), `/api/v1/` a signpost, and the served guide
opens on the guide itself with this server's own origin in its commands."""

from __future__ import annotations

import re

import pytest
from django.core.management import call_command

from config.guide import GUIDE_ORIGINS

pytestmark = pytest.mark.django_db


def test_the_landing_page_links_the_docs_the_guide_and_the_admin(api):
    response = api.get("/")

    assert response.status_code == 200 and response["Content-Type"].startswith("text/html")
    links = set(re.findall(r'href="([^"]+)"', response.content.decode()))
    assert {"/docs", "/redoc", "/openapi.json", "/docs/guide", "/admin/"} <= links


def test_the_api_root_is_a_signpost_not_a_404(api):
    response = api.get("/api/v1/")

    assert response.status_code == 200
    assert response.json()["openapi"] == "/openapi.json" and response.json()["guide"] == "/docs/guide"


def test_the_served_guide_opens_on_the_guide_with_this_servers_origin(api, settings):
    settings.PUBLIC_BASE_URL = "https://127.0.0.1:9555"

    html = api.get("/docs/guide").content.decode()

    assert ">API guide</h1>" in html
    assert "BASE=https://127.0.0.1:9555" in html
    assert not any(origin in html for origin in GUIDE_ORIGINS) and ":8443" not in html
    assert 'href="/docs/guide/index"' in html  # the list of documents is one click away


def test_demo_info_prints_the_banner_with_working_paths(settings, capsys):
    settings.PUBLIC_BASE_URL = "https://127.0.0.1:9555"
    settings.DEMO_USER_PASSWORD = "the-demo-password"

    call_command("demo_info", "--api-key", "bmk_x_y")

    out = capsys.readouterr().out
    assert "API:      https://127.0.0.1:9555/api/v1/" in out
    assert "the-demo-password" in out and "bmk_x_y" in out and "make info" in out


def test_the_banner_says_how_to_try_the_seller_side(api, settings, capsys):
    settings.PUBLIC_BASE_URL = "https://127.0.0.1:9555"

    call_command("demo_info")

    out = capsys.readouterr().out
    assert "https://127.0.0.1:9555/docs/guide/payouts" in out
    assert "$BASE/api/v1/payouts/account" in out and "onboarding_url" in out
    assert "$BASE/api/v1/payouts/balance" in out
    # Its one link is a page (the API calls are commands: they need a token); every link in the banner
    # ends where the URL does (`make info`'s links are fetched as printed).
    assert api.get("/docs/guide/payouts").status_code == 200
    for link in re.findall(r"https://[^\s<>]+", out):
        assert re.fullmatch(r"https://127\.0\.0\.1:9555(/[\w/.-]*)?", link), link
