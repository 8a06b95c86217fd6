from __future__ import annotations

import threading

import pytest
from django.db import connection

from payments.models import LocalPayment, Payment
from tasks_market.models import Bid, Task
from tests.conftest import client_with_token, jwt_for
from tests.support.factories import UserFactory
from tests.tasks_market.conftest import place_bid, post_task, register_agent
from tests.tasks_market.factories import AgentFactory, BidFactory, TaskFactory


@pytest.mark.django_db
def test_select_starts_the_payment(alice_api, bob_api):
    task = post_task(alice_api)
    agent = register_agent(bob_api)
    bid = place_bid(bob_api, task["id"], agent["id"], amount="120.50")

    response = alice_api.post(f"/api/v1/tasks/{task['id']}/bids/{bid['id']}/select")

    assert response.status_code == 200, response.content
    body = response.json()
    assert body["task"]["status"] == "awaiting_payment"
    assert body["task"]["selected_bid_id"] == bid["id"]
    assert body["bid"]["status"] == "selected"
    payment = body["payment"]
    assert set(payment) == {
        "id",
        "provider",
        "provider_payment_id",
        "amount",
        "fee",
        "net",
        "currency",
        "status",
        "client_secret",
        "checkout_url",
    }
    assert (payment["provider"], payment["amount"], payment["currency"], payment["status"]) == (
        "local",
        "120.50",
        "usd",
        "requires_payment",
    )
    provider_side = LocalPayment.objects.get(id=payment["provider_payment_id"])
    assert provider_side.amount_minor == 12050
    assert provider_side.metadata == {"task_id": task["id"], "bid_id": bid["id"]}
    assert provider_side.client_secret == payment["client_secret"]


@pytest.mark.django_db
def test_selecting_the_selected_bid_again_returns_the_same_payment(alice_api, bob_api):
    task = post_task(alice_api)
    agent = register_agent(bob_api)
    bid = place_bid(bob_api, task["id"], agent["id"])
    url = f"/api/v1/tasks/{task['id']}/bids/{bid['id']}/select"

    first, second = alice_api.post(url), alice_api.post(url)

    assert (first.status_code, second.status_code) == (200, 200)
    assert first.json()["payment"] == second.json()["payment"]
    assert Payment.objects.count() == LocalPayment.objects.count() == 1


@pytest.mark.django_db
def test_select_rules(alice_api, bob_api, alice):
    task = post_task(alice_api)
    agent = register_agent(bob_api)
    other_agent = register_agent(bob_api, name="Other")
    bid = place_bid(bob_api, task["id"], agent["id"])
    other = place_bid(bob_api, task["id"], other_agent["id"])
    foreign_bid = BidFactory(task=TaskFactory(poster=alice))

    assert bob_api.post(f"/api/v1/tasks/{task['id']}/bids/{bid['id']}/select").status_code == 404  # not the poster
    assert alice_api.post(f"/api/v1/tasks/{task['id']}/bids/{foreign_bid.id}/select").status_code == 404
    assert alice_api.post(f"/api/v1/tasks/{task['id']}/bids/{bid['id']}/select").status_code == 200
    refused = alice_api.post(f"/api/v1/tasks/{task['id']}/bids/{other['id']}/select")
    assert refused.status_code == 409
    assert refused.json()["code"] == "invalid_state"
    assert Bid.objects.get(id=other["id"]).status == "pending"


@pytest.mark.django_db
def test_a_withdrawn_bid_cannot_be_selected(alice_api, bob_api):
    task = post_task(alice_api)
    agent = register_agent(bob_api)
    bid = place_bid(bob_api, task["id"], agent["id"])
    bob_api.post(f"/api/v1/tasks/{task['id']}/bids/{bid['id']}/withdraw")

    assert alice_api.post(f"/api/v1/tasks/{task['id']}/bids/{bid['id']}/select").status_code == 409


@pytest.mark.django_db(transaction=True)
def test_twenty_concurrent_selects_of_different_bids_make_one_winner():
    poster = UserFactory()
    task = TaskFactory(poster=poster)
    bids = [BidFactory(task=task, agent=AgentFactory()) for _ in range(20)]
    token = jwt_for(poster)
    barrier = threading.Barrier(len(bids))
    results: list[tuple[int, dict]] = []

    def select(bid):
        client = client_with_token(token)
        try:
            barrier.wait()
            response = client.post(f"/api/v1/tasks/{task.id}/bids/{bid.id}/select")
            results.append((response.status_code, response.json()))
        finally:
            connection.close()

    threads = [threading.Thread(target=select, args=(bid,)) for bid in bids]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()

    statuses = sorted(code for code, _ in results)
    assert statuses == [200] + [409] * 19
    assert all(body["code"] == "invalid_state" for code, body in results if code == 409)
    winner = next(body for code, body in results if code == 200)
    assert Payment.objects.count() == 1
    assert LocalPayment.objects.count() == 1
    assert Payment.objects.get().reference == f"bid:{Task.objects.get(pk=task.pk).selected_bid_id}"
    assert Payment.objects.get().reference_id == winner["bid"]["id"]
    assert [f"bid:{pk}" for pk in Bid.objects.filter(task=task, status="selected").values_list("id", flat=True)] == [
        Payment.objects.get().reference
    ]
    assert Task.objects.get(pk=task.pk).status == "awaiting_payment"


@pytest.mark.django_db(transaction=True)
def test_concurrent_selects_of_the_same_bid_share_one_payment():
    poster = UserFactory()
    task = TaskFactory(poster=poster)
    bid = BidFactory(task=task)
    token = jwt_for(poster)
    barrier = threading.Barrier(5)
    results: list[tuple[int, dict]] = []

    def select():
        client = client_with_token(token)
        try:
            barrier.wait()
            response = client.post(f"/api/v1/tasks/{task.id}/bids/{bid.id}/select")
            results.append((response.status_code, response.json()))
        finally:
            connection.close()

    threads = [threading.Thread(target=select) for _ in range(5)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()

    assert [code for code, _ in results] == [200] * 5
    assert len({body["payment"]["id"] for _, body in results}) == 1
    assert Payment.objects.count() == 1
