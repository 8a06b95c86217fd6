"""Select claims with a short conditional UPDATE, asks the provider outside any transaction under a key
derived from the selection, then records the payment, or gives the claim back when the provider failed.

The Stripe adapter talks to a stand-in server (tests/support/stripe_server.py) that honours Idempotency-Key.
"""

from __future__ import annotations

import threading
import time

import pytest
from django.db import connection, transaction

from payments.models import LocalPayment, Payment
from payments.providers import get_payment_provider
from tasks_market.models import Bid, Task
from tests.conftest import client_with_token, jwt_for
from tests.support.factories import UserFactory
from tests.support.stripe_server import stripe_stand_in
from tests.tasks_market.conftest import place_bid, post_task, register_agent, simulate_payment
from tests.tasks_market.factories import AgentFactory, BidFactory, TaskFactory
from webhooks_app.models import WebhookEvent

INTENTS = "/v1/checkout/sessions"  # a payment is a Checkout Session at Stripe


@pytest.fixture
def stripe(settings):
    with stripe_stand_in(settings) as state:
        yield state


def _select(client, task_id, bid_id):
    return client.post(f"/api/v1/tasks/{task_id}/bids/{bid_id}/select")


def _wait_for(condition, seconds: float = 10) -> None:
    deadline = time.monotonic() + seconds
    while not condition():
        assert time.monotonic() < deadline, "timed out"
        time.sleep(0.02)


def _open_task_with_bid(alice_api, bob_api) -> tuple[dict, dict]:
    task = post_task(alice_api)
    agent = register_agent(bob_api)
    return task, place_bid(bob_api, task["id"], agent["id"])


@pytest.mark.django_db
@pytest.mark.parametrize(
    ("failure", "status", "code"), [(500, 502, "provider_error"), (429, 503, "provider_unavailable")]
)
def test_a_provider_failure_gives_the_claim_back_and_changes_nothing(alice_api, bob_api, stripe, failure, status, code):
    task, bid = _open_task_with_bid(alice_api, bob_api)
    events_before = WebhookEvent.objects.count()
    stripe.fail_next = [failure]

    response = _select(alice_api, task["id"], bid["id"])

    assert response.status_code == status, response.content
    assert response.json()["code"] == code
    stored = Task.objects.get(id=task["id"])
    assert (stored.status, stored.selected_bid_id) == ("open", None)
    assert Bid.objects.get(id=bid["id"]).status == "pending"
    assert Payment.objects.count() == 0
    assert WebhookEvent.objects.count() == events_before


@pytest.mark.django_db
def test_a_provider_that_cannot_be_reached_is_503_and_changes_nothing(alice_api, bob_api, settings):
    task, bid = _open_task_with_bid(alice_api, bob_api)
    settings.PAYMENTS_PROVIDER, settings.STRIPE_API_KEY = "stripe", "sk_test_x"
    settings.STRIPE_API_BASE = "http://127.0.0.1:9"  # nothing listens there

    response = _select(alice_api, task["id"], bid["id"])

    assert (response.status_code, response.json()["code"]) == (503, "provider_unavailable")
    assert Task.objects.get(id=task["id"]).status == "open"
    assert Bid.objects.get(id=bid["id"]).status == "pending"


@pytest.mark.django_db
def test_the_retry_after_a_failure_sends_the_same_key_and_gets_one_intent(alice_api, bob_api, stripe):
    task, bid = _open_task_with_bid(alice_api, bob_api)
    stripe.fail_next = [500]

    failed = _select(alice_api, task["id"], bid["id"])
    retried = _select(alice_api, task["id"], bid["id"])
    again = _select(alice_api, task["id"], bid["id"])

    assert (failed.status_code, retried.status_code, again.status_code) == (502, 200, 200)
    assert stripe.keys(INTENTS) == [f"bid-select:{bid['id']}:0"] * 2  # the third was answered from our record
    assert retried.json()["payment"] == again.json()["payment"]
    assert Payment.objects.get().provider_payment_id == retried.json()["payment"]["provider_payment_id"]


@pytest.mark.django_db
def test_a_new_selection_after_a_failed_payment_gets_a_new_key(alice_api, bob_api, api):
    task, bid = _open_task_with_bid(alice_api, bob_api)
    first = _select(alice_api, task["id"], bid["id"]).json()["payment"]
    assert simulate_payment(api, first["provider_payment_id"], "failed").status_code == 200
    assert Task.objects.get(id=task["id"]).status == "open"

    second = _select(alice_api, task["id"], bid["id"])

    assert second.status_code == 200
    assert second.json()["payment"]["provider_payment_id"] != first["provider_payment_id"]
    assert sorted(LocalPayment.objects.values_list("idempotency_key", flat=True)) == [
        f"bid-select:{bid['id']}:0",
        f"bid-select:{bid['id']}:1",
    ]


@pytest.mark.django_db(transaction=True)
def test_no_row_is_locked_while_the_provider_answers_and_a_repeat_shares_the_payment(stripe):
    poster = UserFactory()
    task = TaskFactory(poster=poster)
    bid = BidFactory(task=task)
    other_bid = BidFactory(task=task, agent=AgentFactory())
    token = jwt_for(poster)
    stripe.hold = threading.Event()
    answers: dict[str, object] = {}

    def select(name, bid_id):
        try:
            answers[name] = _select(client_with_token(token), task.id, bid_id)
        finally:
            connection.close()

    first = threading.Thread(target=select, args=("first", bid.id))
    first.start()
    assert stripe.held.wait(10), "the provider was never asked"
    try:
        # The claim is committed and visible, and nothing holds the task or the bid meanwhile.
        with transaction.atomic():
            locked = Task.objects.select_for_update(nowait=True).get(pk=task.pk)
            Bid.objects.select_for_update(nowait=True).get(pk=bid.pk)
        assert (locked.status, locked.selected_bid_id) == ("awaiting_payment", bid.id)
        loser = _select(client_with_token(token), task.id, other_bid.id)  # answered at once, not after the call
        assert (loser.status_code, loser.json()["code"]) == (409, "invalid_state")
        repeat = threading.Thread(target=select, args=("repeat", bid.id))
        repeat.start()
        _wait_for(lambda: len(stripe.keys(INTENTS)) == 2)  # the repeat asks too, under the same key
    finally:
        stripe.hold.set()
    first.join(30)
    repeat.join(30)

    assert answers["first"].status_code == answers["repeat"].status_code == 200
    assert answers["first"].json()["payment"] == answers["repeat"].json()["payment"]
    assert stripe.keys(INTENTS) == [f"bid-select:{bid.id}:0"] * 2
    assert stripe.objects_created(INTENTS) == 1
    assert Payment.objects.count() == 1


@pytest.mark.django_db(transaction=True)
def test_concurrent_selects_with_a_slow_provider_make_one_winner_and_the_rest_409_at_once(stripe):
    poster = UserFactory()
    task = TaskFactory(poster=poster)
    bids = [BidFactory(task=task, agent=AgentFactory()) for _ in range(12)]
    token = jwt_for(poster)
    stripe.hold = threading.Event()
    barrier = threading.Barrier(len(bids))
    results: list[tuple[int, dict]] = []
    lock = threading.Lock()

    def select(bid):
        try:
            barrier.wait()
            response = _select(client_with_token(token), task.id, bid.id)
            with lock:
                results.append((response.status_code, response.json()))
        finally:
            connection.close()

    threads = [threading.Thread(target=select, args=(bid,)) for bid in bids]
    for thread in threads:
        thread.start()
    try:
        assert stripe.held.wait(10)
        # The eleven losers answer while the winner's provider call is still held.
        _wait_for(lambda: len(results) == len(bids) - 1)
        with lock:
            assert sorted(code for code, _ in results) == [409] * (len(bids) - 1)
    finally:
        stripe.hold.set()
    for thread in threads:
        thread.join(30)

    assert sorted(code for code, _ in results) == [200] + [409] * (len(bids) - 1)
    winner = next(body for code, body in results if code == 200)
    assert Payment.objects.get().reference == f"bid:{Task.objects.get(pk=task.pk).selected_bid_id}"
    assert Payment.objects.get().reference_id == winner["bid"]["id"]
    assert [f"bid:{pk}" for pk in Bid.objects.filter(task=task, status="selected").values_list("id", flat=True)] == [
        Payment.objects.get().reference
    ]
    assert stripe.keys(INTENTS) == [f"bid-select:{winner['bid']['id']}:0"]


@pytest.mark.django_db
def test_a_selection_whose_request_died_before_recording_is_completed_by_the_next_select(alice, stripe):
    """The claim was committed and the provider asked, then the process died: the poster selects again."""
    task = TaskFactory(poster=alice, status="awaiting_payment")
    bid = BidFactory(task=task, status="selected")
    Task.objects.filter(pk=task.pk).update(selected_bid=bid)
    # What the dead request had got from the provider under the selection's key, asked as select asks
    # (Stripe refuses a key reused with other parameters).
    made = get_payment_provider().create_payment(
        amount=bid.amount,
        currency=bid.currency,
        metadata={"task_id": str(task.id), "bid_id": str(bid.id)},
        idempotency_key=f"bid-select:{bid.id}:0",
        description=f"Task: {task.title}",
        payee=f"Agent {bid.agent.name}",
    )

    response = _select(client_with_token(jwt_for(alice)), task.id, bid.id)

    assert response.status_code == 200, response.content
    assert response.json()["payment"]["provider_payment_id"] == made.id
    assert stripe.objects_created(INTENTS) == 1
    assert Payment.objects.get().provider_payment_id == made.id
