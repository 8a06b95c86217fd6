"""Creates answer with `Location`; an unknown body field is a 422 `extra_forbidden` (docs/decisions.md#errors,
docs/decisions.md#creates)."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from tests.tasks_market.conftest import task_body

pytestmark = pytest.mark.django_db

ROOT = Path(__file__).resolve().parents[2]


AGENT = {"name": "Copybot", "description": "Writes launch copy.", "endpoint_url": "https://agents.example.com/hook"}


def _extra(loc: list, value) -> dict:
    return {"type": "extra_forbidden", "loc": loc, "msg": "Extra inputs are not permitted", "input": value}


def test_an_unknown_field_on_post_is_extra_forbidden(alice_api):
    response = alice_api.post("/api/v1/brands", {"name": "Acme", "colour": "red"}, format="json")

    assert response.status_code == 422
    assert response.json() == {"detail": [_extra(["body", "colour"], "red")]}


def test_a_misspelt_field_on_patch_is_extra_forbidden_and_changes_nothing(alice_api):
    brand = alice_api.post("/api/v1/brands", {"name": "Acme"}, format="json").json()

    response = alice_api.patch(f"/api/v1/brands/{brand['id']}", {"nmae": "Other"}, format="json")

    assert response.status_code == 422
    assert response.json()["detail"] == [_extra(["body", "nmae"], "Other")]
    assert alice_api.get(f"/api/v1/brands/{brand['id']}").json()["name"] == "Acme"


def test_a_read_only_field_in_a_body_is_extra_forbidden(alice_api):
    response = alice_api.post("/api/v1/brands", {"name": "Acme", "id": "x"}, format="json")

    assert response.json()["detail"] == [_extra(["body", "id"], "x")]


def test_unknown_fields_are_reported_with_the_other_problems(alice_api):
    response = alice_api.post("/api/v1/brands", {"nam": "Acme"}, format="json")

    assert response.status_code == 422
    assert [(e["type"], e["loc"]) for e in response.json()["detail"]] == [
        ("missing", ["body", "name"]),
        ("extra_forbidden", ["body", "nam"]),
    ]


def test_an_unknown_field_of_a_nested_object_is_extra_forbidden(alice_api):
    body = {"content": "Hello", "attachments": [{"type": "image", "url": "https://example.com/a.png", "size": 3}]}

    response = alice_api.post("/api/v1/assistant/messages", body, format="json")

    assert response.status_code == 422
    assert response.json()["detail"] == [_extra(["body", "attachments", 0, "size"], 3)]


def test_the_payments_webhook_accepts_any_fields(api):
    response = api.post("/api/v1/webhooks/payments", {"id": "evt_1", "anything": 1}, format="json")

    assert response.status_code == 400 and response.json()["code"] == "invalid_signature"


def test_creates_answer_with_the_location_of_what_they_created(alice_api):
    brand = alice_api.post("/api/v1/brands", {"name": "Acme"}, format="json")
    assert brand.status_code == 201
    assert brand["Location"] == f"https://testserver/api/v1/brands/{brand.json()['id']}"
    assert alice_api.get(brand["Location"]).json() == brand.json()

    kit = alice_api.post("/api/v1/brand-kits", {"brand_id": brand.json()["id"], "name": "Kit"}, format="json")
    assert kit.status_code == 201, kit.content
    assert kit["Location"] == f"https://testserver/api/v1/brand-kits/{kit.json()['id']}"
    assert alice_api.get(kit["Location"]).status_code == 200


@pytest.mark.parametrize(
    ("path", "body", "kind"),
    [
        ("/api/v1/agents", AGENT, "agents"),
        ("/api/v1/tasks", None, "tasks"),
        ("/api/v1/auth/api-keys", {"name": "ci"}, "auth/api-keys"),
        (
            "/api/v1/webhooks/subscriptions",
            {"url": "https://hooks.example.com/in", "events": ["task.created"]},
            "webhooks/subscriptions",
        ),
    ],
)
def test_each_create_sets_location(alice_api, path, body, kind):
    response = alice_api.post(path, body or task_body(), format="json")

    assert response.status_code == 201, response.content
    assert response["Location"] == f"https://testserver/api/v1/{kind}/{response.json()['id']}"
    if kind != "auth/api-keys":  # a key has no GET of its own, only DELETE
        assert alice_api.get(response["Location"]).status_code == 200


def test_no_view_answers_201_but_through_the_created_helper():
    """`ApiView.created` sets `Location`; a bare 201 would not."""
    offenders = [
        f"{path.relative_to(ROOT)}:{number}"
        for path in ROOT.glob("*/api/**/*.py")
        for number, line in enumerate(path.read_text().splitlines(), 1)
        if re.search(r"HTTP_201_CREATED|status=201\b", line) and path != ROOT / "core" / "api" / "views.py"
    ]
    assert offenders == []
