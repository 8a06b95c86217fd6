from __future__ import annotations

import pytest

from accounts.services import api_key_create
from core.http.ratelimit_rules import RULES
from core.models import RateLimitOverride
from tests.support.ratelimit import bucket_window, one_window

pytestmark = pytest.mark.django_db


@pytest.mark.parametrize(
    "url",
    [
        "/admin/",
        "/admin/accounts/user/",
        "/admin/accounts/apikey/",
        "/admin/core/ratelimitoverride/",
        "/admin/accounts/user/?is_staff__exact=1&q=alice",
        "/admin/core/ratelimitoverride/add/",
    ],
)
def test_admin_pages_render(admin_client, alice, url):
    assert admin_client.get(url, secure=True).status_code == 200


def test_api_key_admin_never_shows_the_hash(admin_client, alice):
    key = api_key_create(user=alice, name="ci").api_key

    html = admin_client.get(f"/admin/accounts/apikey/{key.pk}/change/", secure=True).content.decode()

    assert key.prefix in html
    assert key.key_hash not in html


def test_override_added_in_the_admin_takes_effect(admin_client, api):
    response = admin_client.post(
        "/admin/core/ratelimitoverride/add/",
        {"network": "127.0.0.1", "rule": "signature_scrape_website", "limit": "1", "reason": "test"},
        secure=True,
    )
    assert response.status_code == 302
    assert RateLimitOverride.objects.get().limit == 1

    with one_window(bucket_window(RULES["signature_scrape_website"])):
        api.post("/api/v1/signature/scrape-website", {}, format="json")
        assert api.post("/api/v1/signature/scrape-website", {}, format="json").status_code == 429
