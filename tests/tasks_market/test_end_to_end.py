"""The whole marketplace flow over the API, with a real agent endpoint and real webhook receivers.

Register an agent, post a task, bid, select, pay (a signed payment_intent.succeeded on the payments
webhook), the agent gets a correctly signed dispatch, its owner submits, the poster asks for a
revision, the agent is dispatched again and resubmits, the poster approves and the payment is
released. Each step's outbound webhook reaches the poster's and the agent owner's receivers, signed.
"""

from __future__ import annotations

import pytest

from payments.models import LocalPayment, Payment
from tasks_market.models import Delivery
from tests.conftest import client_with_token, jwt_for
from tests.support.factories import UserFactory
from tests.tasks_market.conftest import Receiver, place_bid, post_task, register_agent, simulate_payment
from tests.tasks_market.factories import text_artefact

MARKET_EVENTS = [
    "task.created",
    "task.cancelled",
    "bid.created",
    "bid.selected",
    "payment.succeeded",
    "payment.failed",
    "delivery.dispatched",
    "delivery.submitted",
    "delivery.approved",
    "delivery.disputed",
    "delivery.revision_requested",
    "delivery.failed",
]


def subscribe(client, receiver: Receiver) -> None:
    response = client.post(
        "/api/v1/webhooks/subscriptions", {"url": receiver.url, "events": MARKET_EVENTS}, format="json"
    )
    assert response.status_code == 201, response.content
    receiver.secret = response.json()["secret"]


@pytest.fixture
def receivers():
    made = {name: Receiver() for name in ("agent", "poster_hooks", "developer_hooks")}
    yield made
    for receiver in made.values():
        receiver.close()


@pytest.mark.django_db(transaction=True)
def test_the_whole_flow(api, receivers):
    poster, developer = UserFactory(), UserFactory()
    poster_api = client_with_token(jwt_for(poster))
    developer_api = client_with_token(jwt_for(developer))
    agent_endpoint, poster_hooks, developer_hooks = (
        receivers["agent"],
        receivers["poster_hooks"],
        receivers["developer_hooks"],
    )
    subscribe(poster_api, poster_hooks)
    subscribe(developer_api, developer_hooks)

    # The developer registers an agent; the endpoint will verify every dispatch with its secret.
    agent = register_agent(developer_api, url=agent_endpoint.url)
    agent_endpoint.secret = agent["signing_secret"]

    task = post_task(poster_api)
    bid = place_bid(developer_api, task["id"], agent["id"])
    selection = poster_api.post(f"/api/v1/tasks/{task['id']}/bids/{bid['id']}/select")
    assert selection.status_code == 200
    payment = selection.json()["payment"]

    # The customer pays; the provider posts the signed payment_intent.succeeded to our webhook.
    paid = simulate_payment(api, payment["provider_payment_id"])
    assert paid.status_code == 200 and paid.json()["status"] == "processed"

    dispatches = agent_endpoint.bodies("task.dispatched")
    assert len(dispatches) == 1
    assert agent_endpoint.requests[0]["verified"] is True
    assert dispatches[0]["data"]["task"]["id"] == task["id"]
    assert dispatches[0]["data"]["revision"] is None
    assert poster_api.get(f"/api/v1/tasks/{task['id']}").json()["status"] == "delivering"
    assert poster_api.get(f"/api/v1/tasks/{task['id']}/delivery").json()["status"] == "dispatched"

    # The agent's owner submits; the poster asks for a revision.
    submitted = developer_api.post(
        dispatches[0]["data"]["submit"]["path"],
        {"artefacts": [text_artefact("Draft one.")], "notes": "v1"},
        format="json",
    )
    assert submitted.status_code == 200 and submitted.json()["task_status"] == "in_review"
    revision = poster_api.post(
        f"/api/v1/tasks/{task['id']}/delivery/request-revision", {"feedback": "Mention the trial."}, format="json"
    )
    assert revision.status_code == 200

    # The agent is dispatched again, with the feedback, under a new webhook-id, correctly signed.
    dispatches = agent_endpoint.bodies("task.dispatched")
    assert len(dispatches) == 2
    assert dispatches[1]["data"]["revision"] == {"number": 1, "feedback": "Mention the trial."}
    assert all(r["verified"] for r in agent_endpoint.requests)
    ids = [r["headers"]["webhook-id"] for r in agent_endpoint.requests]
    assert ids[0] != ids[1]
    assert poster_api.get(f"/api/v1/tasks/{task['id']}/delivery").json()["status"] == "dispatched"

    resubmitted = developer_api.post(
        f"/api/v1/tasks/{task['id']}/delivery",
        {"artefacts": [text_artefact("Draft two, with the free trial.")], "notes": "v2"},
        format="json",
    )
    assert resubmitted.status_code == 200
    approved = poster_api.post(f"/api/v1/tasks/{task['id']}/delivery/approve")
    assert approved.status_code == 200
    assert approved.json()["task_status"] == "completed"

    # The money was captured when paid and is not charged again; approval released the seller's share
    # (docs/payouts.md).
    assert Payment.objects.get(id=payment["id"]).status == "released"
    assert LocalPayment.objects.get(id=payment["provider_payment_id"]).status == "succeeded"
    delivery = Delivery.objects.get(task_id=task["id"])
    assert [s.notes for s in delivery.submissions.all()] == ["v1", "v2"]

    # Every step reached both parties' webhook receivers, signed with their subscription secrets.
    assert poster_hooks.types() == [
        "task.created",
        "bid.created",
        "bid.selected",
        "payment.succeeded",
        "delivery.dispatched",
        "delivery.submitted",
        "delivery.revision_requested",
        "delivery.dispatched",
        "delivery.submitted",
        "delivery.approved",
    ]
    assert developer_hooks.types() == poster_hooks.types()[1:]
    assert all(r["verified"] for r in poster_hooks.requests + developer_hooks.requests)
    approved_event = poster_hooks.bodies("delivery.approved")[0]["data"]
    assert (approved_event["task_id"], approved_event["status"]) == (task["id"], "approved")
