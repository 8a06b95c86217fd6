"""More query parameters than DATA_UPLOAD_MAX_NUMBER_FIELDS is the client's fault: a 400
`too_many_fields` in the error shape, never a 500 (see docs/decisions.md#errors)."""

from __future__ import annotations

import pytest

pytestmark = pytest.mark.django_db

TOO_MANY = "&".join(f"f{i}=1" for i in range(1001))
BODY = {"detail": "The request has more than 1000 fields.", "code": "too_many_fields"}


@pytest.mark.parametrize(
    "path",
    [
        "/api/v1/tasks",
        "/api/v1/brief/suggestions",
        "/api/v1/auth/token",
        "/health",
    ],
)
def test_too_many_query_parameters_unauthenticated(api, path):
    response = api.get(f"{path}?{TOO_MANY}")

    assert response.status_code == 400, response.content
    assert response["Content-Type"] == "application/json"
    assert response.json() == BODY


def test_too_many_query_parameters_authenticated(alice_api):
    response = alice_api.get(f"/api/v1/tasks?{TOO_MANY}")

    assert response.status_code == 400, response.content
    assert response.json() == BODY


def test_too_many_query_parameters_on_a_post(alice_api):
    response = alice_api.post(f"/api/v1/tasks?{TOO_MANY}", {}, format="json")

    assert response.status_code == 400, response.content
    assert response.json() == BODY


def test_the_limit_itself_is_fine(api):
    response = api.get("/api/v1/brief/suggestions?" + "&".join(f"f{i}=1" for i in range(1000)))

    assert response.status_code != 500
    assert response.status_code < 500


def test_a_form_body_with_too_many_fields_never_reaches_form_parsing(api):
    # The API parses JSON only, so DATA_UPLOAD_MAX_NUMBER_FIELDS cannot be reached through a body.
    response = api.post("/api/v1/auth/token", TOO_MANY, content_type="application/x-www-form-urlencoded")

    assert response.status_code == 415
    assert response.json()["code"] == "unsupported_media_type"


@pytest.mark.parametrize("path", ["/admin/login/", "/checkout/" + "s" * 24])
def test_too_many_form_fields_outside_the_api_is_a_400_not_a_500(api, path):
    # Django's own HTML forms parse bodies as forms; its 400 page is kept outside /api/.
    response = api.post(path, TOO_MANY, content_type="application/x-www-form-urlencoded")

    assert response.status_code == 400, response.status_code
