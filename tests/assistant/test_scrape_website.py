from __future__ import annotations

import pytest

pytestmark = pytest.mark.django_db

SCRAPE = "/api/v1/signature/scrape-website"


def test_it_returns_the_facts_of_a_real_page(api, site):
    response = api.post(SCRAPE, {"url": f"{site}/"}, format="json")

    assert response.status_code == 200, response.content
    assert response.json() == {
        "url": f"{site}/",
        "final_url": f"{site}/",
        "truncated": False,
        "title": "Northwind Coffee",
        "description": "Small-batch coffee roasted in Leeds.",
        "logo": f"{site}/static/northwind-logo.svg",
        "colors": ["#6f4e37", "#ffffff"],
        "social_links": {
            "instagram": "https://www.instagram.com/northwindcoffee",
            "linkedin": "https://www.linkedin.com/company/northwind-coffee",
        },
        "headings": [{"level": 1, "text": "Fresh roasts, every week"}, {"level": 2, "text": "Our beans"}],
    }


def test_redirects_are_followed(api, site):
    response = api.post(SCRAPE, {"url": f"{site}/moved"}, format="json")

    assert response.status_code == 200, response.content
    assert response.json()["final_url"] == f"{site}/"
    assert response.json()["title"] == "Northwind Coffee"


@pytest.mark.parametrize("url", ["http://169.254.169.254/", "http://127.0.0.1/", "http://[::1]/", "http://10.0.0.8/x"])
def test_private_addresses_are_refused_unless_allowed(api, settings, url):
    settings.OUTBOUND_ALLOW_PRIVATE_URLS = False

    response = api.post(SCRAPE, {"url": url}, format="json")

    assert response.status_code == 422
    [problem] = response.json()["detail"]
    assert problem["loc"] == ["body", "url"]
    assert problem["type"] == "value_error"
    assert "non-public address" in problem["msg"]


def test_a_page_that_is_not_html_is_422(api, site):
    response = api.post(SCRAPE, {"url": f"{site}/logo.png"}, format="json")

    assert response.status_code == 422
    assert response.json()["detail"][0]["loc"] == ["body", "url"]
    assert "not an HTML page" in response.json()["detail"][0]["msg"]


def test_an_http_error_from_the_site_is_422_on_url(api, site):
    response = api.post(SCRAPE, {"url": f"{site}/missing"}, format="json")

    assert response.status_code == 422
    assert response.json()["detail"] == [
        {
            "type": "value_error",
            "loc": ["body", "url"],
            "msg": "Value error, The website answered HTTP 404.",
            "input": f"{site}/missing",
            "ctx": {"error": "The website answered HTTP 404."},
        }
    ]


def test_an_unreachable_site_is_422_on_url(api, closed_port_url):
    response = api.post(SCRAPE, {"url": closed_port_url}, format="json")

    assert response.status_code == 422
    assert response.json()["detail"][0]["loc"] == ["body", "url"]
    assert response.json()["detail"][0]["msg"] == "Value error, The website could not be reached."


@pytest.mark.parametrize(
    ("body", "type_"), [({}, "missing"), ({"url": "example"}, "url_parsing"), ({"url": 5}, "string_type")]
)
def test_bad_urls_are_422(api, body, type_):
    response = api.post(SCRAPE, body, format="json")

    assert response.status_code == 422
    assert [(e["loc"], e["type"]) for e in response.json()["detail"]] == [(["body", "url"], type_)]
