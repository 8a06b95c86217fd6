"""Every operation that creates a task counts in the task-creation bucket (60/min), so remixing cannot
create more tasks a minute than posting them (see docs/decisions.md#rate-limits)."""

from __future__ import annotations

import pytest

from core.http.ratelimit import classify
from core.http.ratelimit_rules import RULES
from tests.support.ratelimit import bucket_window, one_window
from tests.tasks_market.conftest import task_body

pytestmark = pytest.mark.django_db


@pytest.mark.parametrize(
    "path",
    [
        "/api/v1/tasks",
        "/api/v1/tasks/",
        "/api/v1/tasks/0b8f1f9e-1c2d-4e5f-8a9b-0c1d2e3f4a5b/remix",
        "/api/v1/tasks/0b8f1f9e-1c2d-4e5f-8a9b-0c1d2e3f4a5b/remix/",
    ],
)
def test_every_task_creating_operation_shares_the_create_bucket(path):
    bucket, rule = classify("POST", path)

    assert (bucket, rule.name, rule.limit, rule.period) == ("POST /api/v1/tasks", "tasks_create", 60, 60)


def test_reading_a_remix_path_is_not_a_create():
    bucket, rule = classify("GET", "/api/v1/tasks/0b8f1f9e-1c2d-4e5f-8a9b-0c1d2e3f4a5b/remix")

    assert (bucket, rule.name) == ("/api/v1/tasks", "tasks")


def test_remix_cannot_dodge_the_task_creation_cap(alice_api):
    with one_window(bucket_window(RULES["tasks_create"])):
        first = alice_api.post("/api/v1/tasks", task_body(), format="json")  # 1 of 60
        assert first.status_code == 201, first.content
        remix = f"/api/v1/tasks/{first.json()['id']}/remix"
        remixes = [alice_api.post(remix, {}, format="json") for _ in range(60)]
        over_by_remix = remixes.pop()
        over_by_post = alice_api.post("/api/v1/tasks", {}, format="json")

    assert [response.status_code for response in remixes] == [201] * 59
    assert over_by_remix.status_code == 429
    assert over_by_remix.json() == {"detail": "Rate limit exceeded. Try again later.", "code": "rate_limited"}
    assert over_by_remix["X-RateLimit-Limit"] == "60"
    assert over_by_post.status_code == 429
    # Reading tasks is still in its own, larger bucket.
    assert alice_api.get(f"/api/v1/tasks/{first.json()['id']}").status_code == 200


def test_after_60_posts_a_remix_is_refused(alice_api):
    with one_window(bucket_window(RULES["tasks_create"])):
        source = alice_api.post("/api/v1/tasks", task_body(), format="json")
        assert source.status_code == 201, source.content
        invalid = [alice_api.post("/api/v1/tasks", {}, format="json") for _ in range(59)]  # counted all the same
        response = alice_api.post(f"/api/v1/tasks/{source.json()['id']}/remix", {}, format="json")

    assert [r.status_code for r in invalid] == [422] * 59
    assert response.status_code == 429
