"""Golden tests of docs/decisions.md#errors: the 422 shape and the {detail, code} shape of every other error."""

from __future__ import annotations

import uuid

import pytest
from django.test import override_settings

pytestmark = pytest.mark.django_db


def test_missing_field_is_pydantic_missing(api):
    response = api.post("/api/v1/auth/register", {"password": "a-long-test-password"}, format="json")

    assert response.status_code == 422
    assert response.json() == {
        "detail": [
            {
                "type": "missing",
                "loc": ["body", "email"],
                "msg": "Field required",
                "input": {"password": "a-long-test-password"},
            }
        ]
    }


def test_all_problems_are_reported_together(api):
    response = api.post("/api/v1/auth/register", {"email": 5, "password": ""}, format="json")

    assert response.status_code == 422
    assert response.json()["detail"] == [
        {"type": "string_type", "loc": ["body", "email"], "msg": "Input should be a valid string", "input": 5},
        {
            "type": "string_too_short",
            "loc": ["body", "password"],
            "msg": "String should have at least 1 character",
            "input": "",
            "ctx": {"min_length": 1},
        },
    ]


def test_string_too_short_reports_its_limit(api):
    response = api.post("/api/v1/auth/register", {"email": "a@example.com", "password": "short"}, format="json")

    assert response.json()["detail"] == [
        {
            "type": "string_too_short",
            "loc": ["body", "password"],
            "msg": "String should have at least 8 characters",
            "input": "short",
            "ctx": {"min_length": 8},
        }
    ]


def test_malformed_json_is_json_invalid_at_its_offset(api):
    response = api.post("/api/v1/auth/token", '{"email": "a@example.com",', content_type="application/json")

    assert response.status_code == 422
    assert response.json() == {
        "detail": [
            {
                "type": "json_invalid",
                "loc": ["body", 26],
                "msg": "JSON decode error",
                "input": {},
                "ctx": {"error": "Expecting property name enclosed in double quotes"},
            }
        ]
    }


def test_a_body_that_is_not_an_object(api):
    response = api.post("/api/v1/auth/token", [1, 2], format="json")

    assert response.status_code == 422
    assert response.json()["detail"] == [
        {
            "type": "model_attributes_type",
            "loc": ["body"],
            "msg": "Input should be a valid dictionary or object to extract fields from",
            "input": [1, 2],
        }
    ]


def test_query_parameters_are_validated_with_query_loc(alice_api):
    response = alice_api.get("/api/v1/auth/api-keys?limit=0&offset=x")

    assert response.status_code == 422
    assert response.json()["detail"] == [
        {
            "type": "greater_than_equal",
            "loc": ["query", "limit"],
            "msg": "Input should be greater than or equal to 1",
            "input": "0",
            "ctx": {"ge": 1},
        },
        {
            "type": "int_parsing",
            "loc": ["query", "offset"],
            "msg": "Input should be a valid integer, unable to parse string as an integer",
            "input": "x",
        },
    ]


def test_malformed_uuid_in_path_is_422_not_404(alice_api):
    response = alice_api.delete("/api/v1/auth/api-keys/not-a-uuid")

    assert response.status_code == 422
    [item] = response.json()["detail"]
    assert item["type"] == "uuid_parsing"
    assert item["loc"] == ["path", "key_id"]
    assert item["msg"].startswith("Input should be a valid UUID, ")
    assert item["input"] == "not-a-uuid"


def test_unknown_api_path_is_json_404(api):
    response = api.get("/api/v1/nothing-here")

    assert response.status_code == 404
    assert response.json() == {"detail": "Not found.", "code": "not_found"}


def test_unknown_object_is_json_404(alice_api):
    response = alice_api.delete(f"/api/v1/auth/api-keys/{uuid.uuid4()}")

    assert response.status_code == 404
    assert response.json() == {"detail": "Not found.", "code": "not_found"}


def test_wrong_method_is_json_405(api):
    response = api.get("/api/v1/auth/register")

    assert response.status_code == 405
    assert response.json() == {"detail": 'Method "GET" not allowed.', "code": "method_not_allowed"}


def test_unsupported_media_type_is_415(api):
    response = api.post("/api/v1/auth/token", "email=a", content_type="application/x-www-form-urlencoded")

    assert response.status_code == 415
    assert response.json()["code"] == "unsupported_media_type"


def test_missing_credentials_is_401_with_challenge(api):
    response = api.get("/api/v1/auth/api-keys")

    assert response.status_code == 401
    assert response.json() == {
        "detail": "Authentication credentials were not provided.",
        "code": "not_authenticated",
    }
    assert response["WWW-Authenticate"] == "Bearer"


def test_bad_token_is_401_authentication_failed(api):
    api.credentials(HTTP_AUTHORIZATION="Bearer not-a-jwt")

    response = api.get("/api/v1/auth/api-keys")

    assert response.status_code == 401
    assert response.json()["code"] == "authentication_failed"
    assert response["WWW-Authenticate"] == "Bearer"


@override_settings(DATA_UPLOAD_MAX_MEMORY_SIZE=1000)
def test_oversized_body_is_413(api):
    response = api.post("/api/v1/auth/token", {"email": "a@example.com", "password": "x" * 2000}, format="json")

    assert response.status_code == 413
    assert response.json() == {"detail": "The request body is too large.", "code": "payload_too_large"}


@override_settings(ROOT_URLCONF="tests.core.failing_urls")
def test_unhandled_error_is_json_500_without_internals(api, caplog):
    response = api.get("/api/v1/explode")

    assert response.status_code == 500
    assert response.json() == {"detail": "The server failed to process the request.", "code": "server_error"}
    assert "secret internals" not in response.content.decode()
    assert "secret internals" in caplog.text  # logged for us, not shown to them


@pytest.mark.parametrize(
    ("body", "offset", "reason"),
    [
        ('{"email": "a\\u0000b"}', 12, "NUL characters (\\u0000) are not allowed"),
        ('{"email": "\\ud906x"}', 11, "lone surrogate in hex escape"),
        ('{"email": "x\\udd94"}', 12, "lone surrogate in hex escape"),
    ],
)
def test_text_postgresql_cannot_store_is_json_invalid(api, body, offset, reason):
    response = api.post("/api/v1/auth/token", body, content_type="application/json")

    assert response.status_code == 422
    assert response.json()["detail"] == [
        {
            "type": "json_invalid",
            "loc": ["body", offset],
            "msg": "JSON decode error",
            "input": {},
            "ctx": {"error": reason},
        }
    ]


def test_surrogate_pairs_and_escaped_backslashes_are_fine(api):
    body = '{"email": "a@example.com", "password": "\\ud83d\\ude00 and \\\\u0000 as text"}'

    response = api.post("/api/v1/auth/token", body, content_type="application/json")

    assert response.status_code == 401  # parsed and validated; just wrong credentials


@pytest.mark.parametrize(
    ("path", "body", "offset", "literal"),
    [
        ("/api/v1/tasks", '{"title": "t", "budget_amount": 1e400}', 32, "1e400"),
        ("/api/v1/ads/simulate", '{"budgets": [-2.5E+999]}', 13, "-2.5E+999"),
        # an integer past a double's range: a float field would fail converting it
        ("/api/v1/ads/simulate", '{"current_daily_budget": ' + "9" * 400 + "}", 25, "9" * 32),
    ],
)
def test_a_number_no_double_holds_is_json_invalid_not_a_500(alice_api, path, body, offset, literal):
    """`1e400` is valid JSON but infinite as a float: refused where it stands, and nothing is created."""
    from tasks_market.models import Task

    response = alice_api.post(path, body, content_type="application/json")

    assert response.status_code == 422, response.content
    assert response.json()["detail"] == [
        {
            "type": "json_invalid",
            "loc": ["body", offset],
            "msg": "JSON decode error",
            "input": {},
            "ctx": {"error": f"number out of range: {literal}"},
        }
    ]
    assert not Task.objects.exists()


@pytest.mark.parametrize(("field", "value"), [("title", 123), ("title", 1.5), ("description", 10**30)])
def test_a_number_where_a_string_belongs_is_string_type(alice_api, field, value):
    """DRF's CharField would store `123` as "123"; the schema says string, and so does the server."""
    from tasks_market.models import Task
    from tests.tasks_market.conftest import task_body

    response = alice_api.post("/api/v1/tasks", task_body(**{field: value}), format="json")

    assert response.status_code == 422, response.content
    assert response.json()["detail"] == [
        {"type": "string_type", "loc": ["body", field], "msg": "Input should be a valid string", "input": value}
    ]
    assert not Task.objects.exists()


def test_a_number_in_a_list_of_strings_is_string_type_at_its_index(alice_api):
    from tests.tasks_market.conftest import task_body

    response = alice_api.post("/api/v1/tasks", task_body(requirements=["fine", 7]), format="json")

    assert response.status_code == 422, response.content
    assert [(e["type"], e["loc"]) for e in response.json()["detail"]] == [("string_type", ["body", "requirements", 1])]
