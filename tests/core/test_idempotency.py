"""`Idempotency-Key` (core.http.idempotency): a retried POST never doubles its effect."""

from __future__ import annotations

import threading
from datetime import timedelta

import pytest
from django.db import connection
from django.test import override_settings
from django.utils import timezone

from core.http.idempotency import idempotency_keys_prune
from core.models import IdempotencyKey
from tasks_market.models import Task
from tests.conftest import client_with_token, jwt_for
from tests.core.idempotency_urls import FlakyView
from tests.support.routes import api_routes
from tests.tasks_market.conftest import iso_in

TASK = {
    "title": "Write launch copy",
    "description": "Announce the dashboard.",
    "budget_amount": "200.00",
    "budget_currency": "usd",
    "deadline": iso_in(days=7),
}


def post_task(client, key: str | None, body: dict | None = None):
    headers = {} if key is None else {"HTTP_IDEMPOTENCY_KEY": key}
    return client.post("/api/v1/tasks", body or TASK, format="json", **headers)


def replayed(response) -> bool:
    return response.headers.get("Idempotent-Replayed") == "true"


@pytest.mark.django_db(transaction=True)
def test_ten_concurrent_copies_create_one_task_and_answer_the_same(alice):
    token = jwt_for(alice)
    barrier = threading.Barrier(10)
    responses = []

    def send():
        client = client_with_token(token)
        try:
            barrier.wait()
            responses.append(post_task(client, "create-launch-copy-1"))
        finally:
            connection.close()

    threads = [threading.Thread(target=send) for _ in range(10)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()

    in_flight = [r for r in responses if r.status_code == 409]
    assert all(r.json()["code"] == "idempotency_in_progress" for r in in_flight)
    # A copy told "in progress" retries later and gets the stored answer.
    retried = [post_task(client_with_token(token), "create-launch-copy-1") for _ in in_flight]
    answers = [r for r in responses if r.status_code != 409] + retried
    assert len(answers) == 10
    assert {r.status_code for r in answers} == {201}
    assert len({r.content for r in answers}) == 1
    assert sum(not replayed(r) for r in answers) == 1
    assert Task.objects.count() == 1


@pytest.mark.django_db
def test_a_retry_gets_the_stored_response_marked_as_replayed(alice_api):
    first = post_task(alice_api, "k1")
    retry = post_task(alice_api, "k1", dict(reversed(TASK.items())))  # the same body, keys in another order

    assert first.status_code == 201 and not replayed(first)
    assert (retry.status_code, retry.content, replayed(retry)) == (201, first.content, True)
    assert Task.objects.count() == 1


@pytest.mark.django_db
def test_the_same_key_on_a_different_request_is_422_and_changes_nothing(alice_api):
    first = post_task(alice_api, "k1")
    other_body = post_task(alice_api, "k1", {**TASK, "title": "Something else"})
    other_path = alice_api.post(f"/api/v1/tasks/{first.json()['id']}/cancel", format="json", HTTP_IDEMPOTENCY_KEY="k1")

    for response in (other_body, other_path):
        assert response.status_code == 422
        [problem] = response.json()["detail"]
        assert (problem["type"], problem["loc"]) == ("idempotency_key_reused", ["header", "Idempotency-Key"])
    assert list(Task.objects.values_list("title", "status")) == [("Write launch copy", "open")]


@pytest.mark.django_db
def test_keys_belong_to_their_user(alice_api, bob_api, alice, bob):
    alices = post_task(alice_api, "shared-key")
    bobs = post_task(bob_api, "shared-key")

    assert (bobs.status_code, replayed(bobs)) == (201, False)
    assert bobs.json()["id"] != alices.json()["id"]
    assert sorted(Task.objects.values_list("poster__email", flat=True)) == [alice.email, bob.email]


@pytest.mark.django_db
def test_an_api_key_request_uses_the_keys_user(alice_key_api, alice_api, bob_api, alice):
    with_api_key = post_task(alice_key_api, "k1")
    with_jwt = post_task(alice_api, "k1")
    bobs = post_task(bob_api, "k1")

    assert IdempotencyKey.objects.get(key="k1", user=alice).response_status == 201
    assert (with_jwt.json(), replayed(with_jwt)) == (with_api_key.json(), True)
    assert (bobs.status_code, replayed(bobs)) == (201, False)
    assert Task.objects.count() == 2


@pytest.mark.django_db
def test_a_domain_4xx_is_stored_and_replayed(alice_api):
    task = post_task(alice_api, None).json()
    cancel = f"/api/v1/tasks/{task['id']}/cancel"
    assert alice_api.post(cancel).status_code == 200

    refused = alice_api.post(cancel, HTTP_IDEMPOTENCY_KEY="cancel-1")
    again = alice_api.post(cancel, HTTP_IDEMPOTENCY_KEY="cancel-1")

    assert (refused.status_code, refused.json()["code"], replayed(refused)) == (409, "invalid_state", False)
    assert (again.status_code, again.json(), replayed(again)) == (409, refused.json(), True)


@pytest.mark.django_db
def test_a_422_is_not_stored_so_the_key_can_carry_the_corrected_request(alice_api):
    refused = post_task(alice_api, "k1", {**TASK, "budget_amount": "0"})
    corrected = post_task(alice_api, "k1")

    assert refused.status_code == 422
    assert (corrected.status_code, replayed(corrected)) == (201, False)
    assert Task.objects.count() == 1


@pytest.mark.django_db
@override_settings(ROOT_URLCONF="tests.core.idempotency_urls")
def test_a_5xx_releases_the_key_so_a_retry_runs(alice_api):
    FlakyView.calls = 0
    failed = alice_api.post("/api/v1/flaky", {}, format="json", HTTP_IDEMPOTENCY_KEY="k1")
    retried = alice_api.post("/api/v1/flaky", {}, format="json", HTTP_IDEMPOTENCY_KEY="k1")
    replay = alice_api.post("/api/v1/flaky", {}, format="json", HTTP_IDEMPOTENCY_KEY="k1")

    assert failed.status_code == 500
    assert (retried.status_code, retried.json(), replayed(retried)) == (201, {"call": 2}, False)
    assert (replay.status_code, replay.json(), replayed(replay)) == (201, {"call": 2}, True)
    assert FlakyView.calls == 2


@pytest.mark.django_db
def test_a_request_still_in_flight_is_409_until_its_claim_is_abandoned(alice_api):
    post_task(alice_api, "k1")
    claim = IdempotencyKey.objects.get(key="k1")
    IdempotencyKey.objects.filter(pk=claim.pk).update(response_status=None, locked_at=timezone.now())

    in_flight = post_task(alice_api, "k1")
    IdempotencyKey.objects.filter(pk=claim.pk).update(locked_at=timezone.now() - timedelta(minutes=6))
    taken_over = post_task(alice_api, "k1")

    assert in_flight.status_code == 409
    assert in_flight.json() == {"detail": in_flight.json()["detail"], "code": "idempotency_in_progress"}
    assert (taken_over.status_code, replayed(taken_over)) == (201, False)


@pytest.mark.django_db
def test_a_key_expires_after_24_hours(alice_api):
    first = post_task(alice_api, "k1")
    IdempotencyKey.objects.update(expires_at=timezone.now() - timedelta(seconds=1))

    later = post_task(alice_api, "k1")

    assert (later.status_code, replayed(later)) == (201, False)
    assert later.json()["id"] != first.json()["id"]
    assert IdempotencyKey.objects.get(key="k1").expires_at > timezone.now() + timedelta(hours=23)


@pytest.mark.django_db
def test_prune_deletes_only_expired_keys(alice_api):
    post_task(alice_api, "old")
    post_task(alice_api, "new")
    IdempotencyKey.objects.filter(key="old").update(expires_at=timezone.now() - timedelta(seconds=1))

    assert idempotency_keys_prune() == 1
    assert list(IdempotencyKey.objects.values_list("key", flat=True)) == ["new"]


@pytest.mark.django_db
def test_without_the_header_nothing_changes(alice_api):
    responses = [post_task(alice_api, None) for _ in range(2)]

    assert [r.status_code for r in responses] == [201, 201]
    assert not any("Idempotent-Replayed" in r.headers for r in responses)
    assert (Task.objects.count(), IdempotencyKey.objects.count()) == (2, 0)


@pytest.mark.django_db
@pytest.mark.parametrize(
    ("key", "type_"),
    [("", "string_too_short"), ("k" * 256, "string_too_long"), ("clé", "string_pattern_mismatch")],
)
def test_a_malformed_key_is_422_at_the_header(alice_api, key, type_):
    response = post_task(alice_api, key)

    assert response.status_code == 422
    [problem] = response.json()["detail"]
    assert (problem["type"], problem["loc"]) == (type_, ["header", "Idempotency-Key"])
    assert (Task.objects.count(), IdempotencyKey.objects.count()) == (0, 0)


IDEMPOTENT_OPERATIONS = {
    "POST /api/v1/agents",
    "POST /api/v1/agents/{agent_id}/benchmark",
    "POST /api/v1/agents/{agent_id}/rotate-secret",
    "POST /api/v1/agents/{agent_id}/searches",
    "POST /api/v1/allmodelchat/credits/top-up",
    "POST /api/v1/allmodelchat/generate/image",
    "POST /api/v1/assistant/messages",
    "POST /api/v1/auth/api-keys",
    "POST /api/v1/brand-kits",
    "POST /api/v1/brand-kits/{kit_id}/link-team/{team_id}",
    "POST /api/v1/brands",
    "POST /api/v1/brands/{brand_id}/brand-intelligence/tracked-groups",
    "POST /api/v1/brands/{brand_id}/brand-intelligence/tracked-groups/{group_id}/members",
    "POST /api/v1/brands/{brand_id}/competitors",
    "POST /api/v1/brands/{brand_id}/competitors/{competitor_id}/restore",
    "POST /api/v1/brands/{brand_id}/connected-accounts/authorize",
    "POST /api/v1/brands/{brand_id}/publications",
    "POST /api/v1/brands/{brand_id}/research/{module}/run",
    "POST /api/v1/disputes/{task_id}/resolve",
    "POST /api/v1/payouts/account",
    "POST /api/v1/publications/{publication_id}/approve",
    "POST /api/v1/publications/{publication_id}/cancel",
    "POST /api/v1/publications/{publication_id}/confirm",
    "POST /api/v1/tasks",
    "POST /api/v1/tasks/{task_id}/bids",
    "POST /api/v1/tasks/{task_id}/bids/{bid_id}/select",
    "POST /api/v1/tasks/{task_id}/bids/{bid_id}/withdraw",
    "POST /api/v1/tasks/{task_id}/cancel",
    "POST /api/v1/tasks/{task_id}/delivery",
    "POST /api/v1/tasks/{task_id}/delivery/approve",
    "POST /api/v1/tasks/{task_id}/delivery/dispute",
    "POST /api/v1/tasks/{task_id}/delivery/request-revision",
    "POST /api/v1/tasks/{task_id}/delivery/retry",
    "POST /api/v1/tasks/{task_id}/remix",
    "POST /api/v1/tasks/{task_id}/review",
    "POST /api/v1/tasks/{task_id}/review/reply",
    "POST /api/v1/teams",
    "POST /api/v1/teams/{team_id}/reactivate",
    "POST /api/v1/teams/{team_id}/unsubscribe",
    "POST /api/v1/webhooks/subscriptions",
    "POST /api/v1/webhooks/subscriptions/{subscription_id}/rotate-secret",
}


@pytest.mark.django_db
def test_the_schema_documents_the_header_on_exactly_those_operations(api):
    schema = api.get("/openapi.json").json()
    with_header = {}
    for path, item in schema["paths"].items():
        for method, operation in item.items():
            names = [p["name"] for p in operation.get("parameters", []) if p["in"] == "header"]
            if "Idempotency-Key" in names:
                with_header[f"{method.upper()} {path}"] = operation

    assert set(with_header) == IDEMPOTENT_OPERATIONS
    assert set(api_routes()) >= IDEMPOTENT_OPERATIONS
    for operation in with_header.values():
        assert "idempotency_in_progress" in operation["responses"]["409"]["description"]
        success = next(code for code in operation["responses"] if code.startswith("2"))
        assert "Idempotent-Replayed" in operation["responses"][success]["headers"]


class ProcessDied(BaseException):
    """What a SIGKILL looks like from inside: nothing after this point runs, no `except Exception` sees it."""


def _die_when_the_answer_is_stored(execute, sql, params, many, context):
    if sql.lstrip().upper().startswith("UPDATE") and "core_idempotencykey" in sql:
        raise ProcessDied()
    return execute(sql, params, many, context)


@pytest.mark.django_db(transaction=True)
def test_a_create_that_dies_before_its_answer_is_stored_leaves_nothing_a_retry_could_double(alice):
    """POST /tasks commits the task and its stored answer together (`@idempotent(atomic=True)`): a process
    killed between the view's work and the store leaves no task, so the retry that takes the claim over
    after IN_FLIGHT_TIMEOUT creates the one and only task."""
    client = client_with_token(jwt_for(alice))
    with connection.execute_wrapper(_die_when_the_answer_is_stored), pytest.raises(ProcessDied):
        post_task(client, "dies-before-the-store")
    assert not Task.objects.filter(poster=alice).exists()
    # A real kill leaves the claim until IN_FLIGHT_TIMEOUT, then a retry takes it over; here the claim is
    # released on the way out: either way the retry runs against a database the first attempt never changed.
    retry = post_task(client, "dies-before-the-store")
    assert retry.status_code == 201, retry.content
    assert Task.objects.filter(poster=alice).count() == 1
    again = post_task(client, "dies-before-the-store")
    assert again.status_code == 201 and replayed(again) and again.json()["id"] == retry.json()["id"]
