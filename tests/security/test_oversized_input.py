"""An oversized list or string is refused on its size before any item is validated, and a 422 echoes
at most a short prefix of what was sent (see docs/decisions.md#errors)."""

from __future__ import annotations

import json
import time

import pytest

from core.api.validation import INPUT_ECHO_MAX_CHARS
from tests.tasks_market.conftest import task_body

pytestmark = pytest.mark.django_db


def test_a_megabyte_list_is_refused_on_its_length_quickly_and_briefly(alice_api):
    requirements = ["a"] * 180_000  # about 900 KB of JSON, under the body limit
    body = json.dumps(task_body(requirements=requirements))

    started = time.process_time()
    response = alice_api.post("/api/v1/tasks", body, content_type="application/json")
    cpu = time.process_time() - started

    assert response.status_code == 422
    (item,) = response.json()["detail"]
    assert item["type"] == "too_long"
    assert item["loc"] == ["body", "requirements"]
    assert item["ctx"] == {"field_type": "List", "max_length": 50, "actual_length": 180_000}
    assert len(response.content) < 2 * INPUT_ECHO_MAX_CHARS
    assert cpu < 1.0, f"{cpu:.2f} s of CPU for one oversized list"


def test_an_oversized_list_is_not_validated_item_by_item(alice_api):
    response = alice_api.post("/api/v1/tasks", task_body(requirements=["x" * 501] * 60), format="json")

    assert response.status_code == 422
    assert [(e["type"], e["loc"]) for e in response.json()["detail"]] == [("too_long", ["body", "requirements"])]


def test_every_oversized_field_is_reported_together(alice_api):
    response = alice_api.post("/api/v1/tasks", task_body(title="t" * 300_000, requirements=["r"] * 51), format="json")

    assert response.status_code == 422
    errors = {tuple(e["loc"]): e for e in response.json()["detail"]}
    assert set(errors) == {("body", "title"), ("body", "requirements")}
    assert errors[("body", "title")]["type"] == "string_too_long"
    assert errors[("body", "title")]["ctx"] == {"max_length": 200}
    assert len(response.content) < 3 * INPUT_ECHO_MAX_CHARS


def test_a_long_string_is_echoed_as_a_prefix(alice_api):
    response = alice_api.post("/api/v1/tasks", task_body(title="t" * 300_000), format="json")

    (item,) = response.json()["detail"]
    assert item["type"] == "string_too_long"
    assert item["input"] == "t" * INPUT_ECHO_MAX_CHARS


def test_a_missing_field_does_not_echo_a_huge_body(alice_api):
    body = task_body(description="d" * 9_000, requirements=["r" * 400] * 40)
    del body["title"]

    response = alice_api.post("/api/v1/tasks", body, format="json")

    assert response.status_code == 422
    (item,) = response.json()["detail"]
    assert item["type"] == "missing"
    assert len(json.dumps(item["input"])) <= 2 * INPUT_ECHO_MAX_CHARS


def test_small_inputs_are_echoed_whole(alice_api):
    response = alice_api.post("/api/v1/tasks", task_body(title="t" * 201), format="json")

    (item,) = response.json()["detail"]
    assert item["loc"] == ["body", "title"]
    assert item["input"] == "t" * 201
