from __future__ import annotations

import json

import pytest

pytestmark = pytest.mark.django_db

BRIEF = "/api/v1/brief/generate"
SUGGESTIONS = "/api/v1/brief/suggestions"
TAGLINE = "/api/v1/signature/tagline"


def test_a_brief_is_built_from_the_inputs(api):
    response = api.post(
        BRIEF,
        {
            "brand_name": "Northwind Coffee",
            "objective": "sales",
            "audience": "remote workers",
            "channels": ["instagram", "email", "instagram"],
        },
        format="json",
    )

    assert response.status_code == 200, response.content
    brief = response.json()
    assert brief["brand_name"] == "Northwind Coffee"
    assert brief["website"] is None
    assert brief["objective"] == "sales"
    assert brief["channels"] == ["instagram", "email"]
    assert brief["key_message"] == "Get Northwind Coffee today: made for remote workers."
    assert [d["channel"] for d in brief["deliverables"]] == ["instagram", "email"]
    assert brief["kpis"] == ["Return on ad spend", "Cost per acquisition", "Conversion rate"]
    assert brief["model"] == "local-template-1"
    assert "remote workers" in brief["summary"]


def test_a_brief_from_a_website_names_the_brand_after_its_domain(api):
    response = api.post(BRIEF, {"website": "https://www.acme-gear.co.uk/about"}, format="json")

    assert response.status_code == 200, response.content
    brief = response.json()
    assert brief["brand_name"] == "Acme Gear"
    assert brief["website"] == "https://www.acme-gear.co.uk/about"
    assert brief["objective"] == "awareness"
    assert brief["channels"] == ["instagram", "youtube", "out_of_home"]  # chosen for awareness
    assert brief["audience"] is None


def test_the_same_brief_request_gives_the_same_brief(api):
    body = {"brand_name": "Globex", "objective": "launch"}

    assert api.post(BRIEF, body, format="json").json() == api.post(BRIEF, body, format="json").json()


@pytest.mark.parametrize(
    ("body", "loc", "type_"),
    [
        ({}, ["body"], "value_error"),
        ({"brand_name": "A", "objective": "fame"}, ["body", "objective"], "literal_error"),
        ({"brand_name": "A", "channels": ["myspace"]}, ["body", "channels", 0], "literal_error"),
        ({"brand_name": "A", "channels": ["x"] * 9}, ["body", "channels"], "too_long"),
        ({"website": "not a url"}, ["body", "website"], "url_parsing"),
    ],
)
def test_bad_brief_requests_are_422(api, body, loc, type_):
    response = api.post(BRIEF, body, format="json")

    assert response.status_code == 422
    assert [(e["loc"], e["type"]) for e in response.json()["detail"]] == [(loc, type_)]


def test_suggestions_are_tailored_to_the_query(api):
    b2b = api.get(SUGGESTIONS, {"q": "b2b saas"}).json()
    general = api.get(SUGGESTIONS).json()

    assert b2b["query"] == "b2b saas"
    assert b2b["objectives"][0] == "leads"
    assert b2b["channels"][0] == "linkedin"
    assert "People actively searching for b2b saas" in b2b["audiences"]
    assert general["query"] == ""
    assert general["objectives"][0] == "awareness"
    assert "Existing customers and newsletter subscribers" in general["audiences"]


def test_suggestions_query_is_bounded(api):
    response = api.get(SUGGESTIONS, {"q": "x" * 101})

    assert response.status_code == 422
    assert response.json()["detail"][0]["loc"] == ["query", "q"]


def test_taglines_are_several_distinct_and_deterministic(api):
    body = {"brand_name": "Northwind", "description": "Small-batch coffee roasters", "tone": "premium", "count": 4}

    first = api.post(TAGLINE, body, format="json")
    second = api.post(TAGLINE, body, format="json")

    assert first.status_code == 200, first.content
    taglines = first.json()["taglines"]
    assert len(taglines) == len(set(taglines)) == 4
    assert first.json() == second.json()
    assert first.json()["tone"] == "premium"
    assert any("Northwind" in t for t in taglines)


def test_taglines_default_to_five_friendly_ones(api):
    body = api.post(TAGLINE, {"brand_name": "Globex"}, format="json").json()

    assert body["tone"] == "friendly"
    assert len(body["taglines"]) == 5


@pytest.mark.parametrize(
    ("body", "loc", "type_"),
    [
        ({}, ["body", "brand_name"], "missing"),
        ({"brand_name": "A", "count": 11}, ["body", "count"], "less_than_equal"),
        ({"brand_name": "A", "count": 0}, ["body", "count"], "greater_than_equal"),
        ({"brand_name": "A", "tone": "sarcastic"}, ["body", "tone"], "literal_error"),
    ],
)
def test_bad_tagline_requests_are_422(api, body, loc, type_):
    response = api.post(TAGLINE, body, format="json")

    assert response.status_code == 422
    assert [(e["loc"], e["type"]) for e in response.json()["detail"]] == [(loc, type_)]


def test_tools_work_through_an_openai_compatible_provider(api, settings, fake_openai):
    settings.LLM_PROVIDER = "openai"
    answer = {"taglines": ["Coffee, done properly.", "Coffee, done properly.", "Roasted for you."]}
    fake_openai.replies = [(200, {"model": "gpt-test", "choices": [{"message": {"content": json.dumps(answer)}}]})]

    response = api.post(TAGLINE, {"brand_name": "Northwind", "count": 3}, format="json")

    assert response.status_code == 200, response.content
    assert response.json()["taglines"] == ["Coffee, done properly.", "Roasted for you."]
    assert response.json()["model"] == "gpt-test"
    request = fake_openai.requests[0]["body"]
    assert request["response_format"] == {"type": "json_object"}
    assert json.loads(request["messages"][1]["content"])["brand_name"] == "Northwind"


@pytest.mark.parametrize("content", ["not json at all", json.dumps({"summary": "only this"}), json.dumps([1, 2])])
def test_an_unusable_model_answer_is_502(api, settings, fake_openai, content):
    settings.LLM_PROVIDER = "openai"
    fake_openai.replies = [(200, {"choices": [{"message": {"content": content}}]})]

    response = api.post(BRIEF, {"brand_name": "Northwind"}, format="json")

    assert response.status_code == 502
    assert response.json()["code"] == "provider_error"


def test_a_token_is_not_needed_and_is_ignored(alice_api, api):
    assert api.post(TAGLINE, {"brand_name": "A"}, format="json").status_code == 200
    assert alice_api.get(SUGGESTIONS).status_code == 200


def test_long_inputs_still_make_a_brief_and_taglines(api):
    brief = api.post(BRIEF, {"brand_name": "B" * 200, "audience": "0" * 500}, format="json")
    taglines = api.post(TAGLINE, {"brand_name": "T" * 100, "description": "z" * 1000, "count": 10}, format="json")

    assert brief.status_code == 200, brief.content
    assert taglines.status_code == 200, taglines.content
    assert len(taglines.json()["taglines"]) == 10
