"""Deeply nested JSON is a 422 `json_invalid`, never a 500 (RecursionError)."""

from __future__ import annotations

import pytest

from core.api.parsers import MAX_DEPTH

pytestmark = pytest.mark.django_db

URL = "/api/v1/auth/register"


def test_fifty_thousand_nested_brackets_are_422_json_invalid(api):
    response = api.post(URL, "[" * 50_000, content_type="application/json")

    assert response.status_code == 422
    [problem] = response.json()["detail"]
    assert (problem["type"], problem["loc"]) == ("json_invalid", ["body", MAX_DEPTH])


def test_nested_objects_past_the_limit_are_refused_too(api):
    body = '{"a":' * (MAX_DEPTH + 1) + "1" + "}" * (MAX_DEPTH + 1)

    response = api.post(URL, body, content_type="application/json")

    assert response.status_code == 422
    assert response.json()["detail"][0]["type"] == "json_invalid"


def test_brackets_inside_strings_do_not_count(api):
    # A shallow body whose string is full of brackets parses; the e-mail is then refused as an e-mail.
    body = '{"email": "' + "[{" * 5_000 + '", "password": "a-long-password-1"}'

    response = api.post(URL, body, content_type="application/json")

    assert response.status_code == 422
    assert {tuple(p["loc"]) for p in response.json()["detail"]} == {("body", "email")}
