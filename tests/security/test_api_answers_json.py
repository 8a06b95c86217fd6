"""Every answer under /api/ is JSON in the error shape, whatever Django itself refuses: an unknown path
(with any method, CSRF checks on, as a browser-less client meets them), a CSRF failure, and the
400/403/404/500 handlers (see docs/decisions.md#errors)."""

from __future__ import annotations

import json

import pytest
from django.core.exceptions import PermissionDenied, SuspiciousOperation
from django.http import Http404
from django.middleware.csrf import _get_failure_view
from django.test import RequestFactory
from django.urls import get_resolver

from tests.conftest import HttpsAPIClient

pytestmark = pytest.mark.django_db

NOT_FOUND = {"detail": "Not found.", "code": "not_found"}


@pytest.fixture
def strict_api() -> HttpsAPIClient:
    """A client whose requests get Django's CSRF checks, as a real one's do."""
    return HttpsAPIClient(enforce_csrf_checks=True)


@pytest.mark.parametrize("method", ["post", "put", "patch", "delete", "get"])
@pytest.mark.parametrize("path", ["/api/v1/nothing-here", "/api/nothing", "/api/", "/api/v1/tasks/x/y/z"])
def test_an_unknown_api_path_is_a_json_404_for_every_method(strict_api, method, path):
    response = getattr(strict_api, method)(path, {"a": 1}, format="json")

    assert response.status_code == 404, response.content[:200]
    assert response["Content-Type"] == "application/json"
    assert response.json() == NOT_FOUND


def test_an_unknown_api_path_with_a_session_cookie_is_still_a_json_404(strict_api):
    strict_api.cookies["sessionid"] = "x" * 32
    strict_api.cookies["csrftoken"] = "y" * 32

    response = strict_api.post("/api/v1/nothing-here", {"a": 1}, format="json", HTTP_REFERER="https://evil.example/")

    assert response.status_code == 404
    assert response.json() == NOT_FOUND


def test_the_csrf_failure_view_answers_json_under_api():
    request = RequestFactory().post("/api/v1/anything", secure=True)

    response = _get_failure_view()(request, reason="Referer checking failed - no Referer.")

    assert response.status_code == 403
    assert response["Content-Type"] == "application/json"
    assert json.loads(response.content)["code"] == "csrf_failed"
    assert "Referer" not in json.loads(response.content)["detail"]


def test_the_csrf_failure_view_stays_html_outside_api():
    request = RequestFactory().post("/admin/login/", secure=True)

    response = _get_failure_view()(request, reason="CSRF cookie not set.")

    assert response.status_code == 403
    assert response["Content-Type"].startswith("text/html")


@pytest.mark.parametrize(
    ("status", "exception", "code"),
    [
        (400, SuspiciousOperation("bad"), "bad_request"),
        (403, PermissionDenied(), "permission_denied"),
        (404, Http404(), "not_found"),
        (500, None, "server_error"),
    ],
)
def test_the_error_handlers_answer_json_under_api(status, exception, code):
    handler = get_resolver().resolve_error_handler(status)
    request = RequestFactory().get("/api/v1/anything", secure=True)

    response = handler(request) if exception is None else handler(request, exception)

    assert response.status_code == status
    assert response["Content-Type"] == "application/json"
    assert json.loads(response.content)["code"] == code


def test_a_disallowed_host_under_api_is_a_json_400(api):
    response = api.get("/api/v1/nothing-here", HTTP_HOST="evil.example")

    assert response.status_code == 400
    assert response["Content-Type"] == "application/json"
    assert response.json() == {"detail": "The request could not be understood.", "code": "bad_request"}
