from __future__ import annotations

import pytest

from payments.models import LocalPayment, Payment
from tasks_market.models import Bid, Task
from tests.tasks_market.conftest import iso_in, place_bid, post_task, register_agent
from tests.tasks_market.factories import TaskFactory, delivering_task

pytestmark = pytest.mark.django_db


def test_create_opens_a_task(alice_api, alice):
    task = post_task(alice_api)

    assert task["status"] == "open"
    assert task["budget_amount"] == "200.00"
    assert task["is_mine"] is True
    assert task["remixed_from"] is None
    assert Task.objects.get(id=task["id"]).poster == alice


@pytest.mark.parametrize(
    ("changes", "loc"),
    [
        ({"deadline": iso_in(hours=-1)}, ["body", "deadline"]),
        ({"budget_amount": "0"}, ["body", "budget_amount"]),
        ({"budget_amount": "10.505"}, ["body", "budget_amount"]),
        ({"budget_currency": "USD"}, ["body", "budget_currency"]),
        ({"budget_currency": "jpy", "budget_amount": "10.50"}, ["body", "budget_amount"]),
        ({"title": ""}, ["body", "title"]),
        ({"requirements": "one"}, ["body", "requirements"]),
    ],
)
def test_create_rejects_bad_input(alice_api, changes, loc):
    response = alice_api.post("/api/v1/tasks", {**_valid(), **changes}, format="json")

    assert response.status_code == 422, response.content
    assert [e["loc"] for e in response.json()["detail"]] == [loc]


def _valid() -> dict:
    return {"title": "t", "description": "d", "budget_amount": 10, "budget_currency": "usd", "deadline": iso_in(days=1)}


def test_list_mine_and_open_with_status_filter(alice_api, bob_api, alice):
    mine = post_task(alice_api)
    theirs = post_task(bob_api)
    TaskFactory(poster=alice, status="cancelled")

    own = alice_api.get("/api/v1/tasks").json()
    open_ = alice_api.get("/api/v1/tasks?scope=open").json()
    cancelled = alice_api.get("/api/v1/tasks?scope=mine&status=cancelled").json()

    assert own["total"] == 2 and own["has_more"] is False
    assert {t["id"] for t in open_["items"]} == {mine["id"], theirs["id"]}
    assert [t["is_mine"] for t in open_["items"]] == [False, True]  # newest first
    assert [t["status"] for t in cancelled["items"]] == ["cancelled"]
    assert alice_api.get("/api/v1/tasks?scope=all").status_code == 422


def test_open_tasks_are_visible_to_all_others_only_to_poster_and_winner(alice_api, bob_api, staff_api):
    task = post_task(alice_api)
    winner_agent, loser_agent = register_agent(bob_api), register_agent(staff_api)
    winning = place_bid(bob_api, task["id"], winner_agent["id"])
    place_bid(staff_api, task["id"], loser_agent["id"])
    assert staff_api.get(f"/api/v1/tasks/{task['id']}").status_code == 200  # open: everyone

    alice_api.post(f"/api/v1/tasks/{task['id']}/bids/{winning['id']}/select")

    assert alice_api.get(f"/api/v1/tasks/{task['id']}").status_code == 200
    assert bob_api.get(f"/api/v1/tasks/{task['id']}").status_code == 200
    assert staff_api.get(f"/api/v1/tasks/{task['id']}").status_code == 404  # a losing bidder
    assert staff_api.get(f"/api/v1/tasks/{task['id']}/bids").status_code == 404


def test_cancel_an_open_task_rejects_its_bids(alice_api, bob_api):
    task = post_task(alice_api)
    agent = register_agent(bob_api)
    bid = place_bid(bob_api, task["id"], agent["id"])

    response = alice_api.post(f"/api/v1/tasks/{task['id']}/cancel")

    assert response.status_code == 200
    assert response.json()["status"] == "cancelled"
    assert Bid.objects.get(id=bid["id"]).status == "rejected"
    assert alice_api.post(f"/api/v1/tasks/{task['id']}/cancel").json()["code"] == "invalid_state"


def test_cancel_awaiting_payment_cancels_the_payment(alice_api, bob_api):
    task = post_task(alice_api)
    agent = register_agent(bob_api)
    bid = place_bid(bob_api, task["id"], agent["id"])
    payment = alice_api.post(f"/api/v1/tasks/{task['id']}/bids/{bid['id']}/select").json()["payment"]

    assert alice_api.post(f"/api/v1/tasks/{task['id']}/cancel").status_code == 200

    assert Payment.objects.get(id=payment["id"]).status == "cancelled"
    assert LocalPayment.objects.get(id=payment["provider_payment_id"]).status == "cancelled"


def test_cancel_is_refused_once_paid_and_for_others(alice_api, bob_api, alice):
    task, _ = delivering_task(poster=alice)

    assert alice_api.post(f"/api/v1/tasks/{task.id}/cancel").status_code == 409
    open_task = post_task(alice_api)
    assert bob_api.post(f"/api/v1/tasks/{open_task['id']}/cancel").status_code == 404


def test_remix_copies_any_open_task_or_ones_own(alice_api, bob_api, alice):
    theirs = post_task(bob_api, title="Bob's task")

    remix = alice_api.post(f"/api/v1/tasks/{theirs['id']}/remix", {"budget_amount": "99.00"}, format="json")

    assert remix.status_code == 201
    body = remix.json()
    assert (body["title"], body["budget_amount"], body["remixed_from"]) == ("Bob's task", "99.00", theirs["id"])
    assert (body["status"], body["is_mine"]) == ("open", True)

    own_closed, _ = delivering_task(poster=alice)
    assert alice_api.post(f"/api/v1/tasks/{own_closed.id}/remix", {}, format="json").status_code == 201
    assert bob_api.post(f"/api/v1/tasks/{own_closed.id}/remix", {}, format="json").status_code == 404


def test_remix_needs_a_new_deadline_when_the_old_one_passed(alice_api, alice):
    old = TaskFactory(poster=alice, status="cancelled")
    Task.objects.filter(pk=old.pk).update(deadline=old.created_at)

    refused = alice_api.post(f"/api/v1/tasks/{old.id}/remix", {}, format="json")
    accepted = alice_api.post(f"/api/v1/tasks/{old.id}/remix", {"deadline": iso_in(days=3)}, format="json")

    assert refused.status_code == 422
    assert refused.json()["detail"][0]["loc"] == ["body", "deadline"]
    assert accepted.status_code == 201


def test_list_items_are_exactly_the_task_as_its_own_endpoint_and_the_schema_show_it(alice_api, alice):
    """Lists render rows with `task_item`; the detail goes through TaskSerializer: the two must agree."""
    from datetime import UTC, datetime

    from tasks_market.api.serializers import TaskSerializer

    source = TaskFactory(poster=alice)
    task, _ = delivering_task(poster=alice)
    completed = datetime(2026, 3, 1, 12, 30, 5, 123456, tzinfo=UTC)
    Task.objects.filter(pk=task.pk).update(
        remixed_from=source, completed_at=completed, budget_amount="1234.50", requirements=["a", "b"]
    )

    listed = {item["id"]: item for item in alice_api.get("/api/v1/tasks?scope=mine").json()["items"]}
    for pk in (source.pk, task.pk):
        assert listed[str(pk)] == alice_api.get(f"/api/v1/tasks/{pk}").json()

    item = listed[str(task.pk)]
    assert list(item) == list(TaskSerializer().fields)
    assert item["remixed_from"] == str(source.pk)
    assert item["selected_bid_id"] == str(Task.objects.get(pk=task.pk).selected_bid_id)
    assert item["completed_at"] == "2026-03-01T12:30:05.123456Z"
    assert item["budget_amount"] == "1234.50"
    assert item["requirements"] == ["a", "b"]
    assert item["is_mine"] is True and item["cancelled_at"] is None
