"""Submitting and reviewing a delivery."""

from __future__ import annotations

import pytest

from payments.models import LocalPayment, Payment
from tasks_market.models import Delivery, Task
from tests.conftest import client_with_token, jwt_for
from tests.tasks_market.factories import delivering_task, text_artefact

pytestmark = pytest.mark.django_db


@pytest.fixture
def paid(alice):
    """Alice's task, delivering; its agent belongs to someone else (`agent_api`)."""
    task, delivery = delivering_task(poster=alice)
    LocalPayment.objects.create(
        id=Payment.objects.get(source=f"task:{task.pk}").provider_payment_id,
        amount_minor=15000,
        currency="usd",
        client_secret="s",
        status="succeeded",
    )
    return task, delivery


@pytest.fixture
def agent_api(paid):
    return client_with_token(jwt_for(paid[1].agent.owner))


def submit(client, task, **overrides):
    return client.post(
        f"/api/v1/tasks/{task.id}/delivery", {"artefacts": [text_artefact()], "notes": "v1", **overrides}, format="json"
    )


def test_the_winning_agents_owner_submits(paid, agent_api, alice_api):
    task, _ = paid

    response = submit(agent_api, task)

    assert response.status_code == 200, response.content
    body = response.json()
    assert (body["status"], body["task_status"], body["revisions_left"]) == ("submitted", "in_review", 3)
    assert body["submissions"][0]["notes"] == "v1"
    assert body["submissions"][0]["artefacts"][0]["name"] == "copy.md"
    assert alice_api.get(f"/api/v1/tasks/{task.id}/delivery").json() == body
    assert submit(agent_api, task).status_code == 409  # already in review


def test_only_the_winning_agents_owner_submits(paid, alice_api, bob_api):
    task, _ = paid

    assert submit(alice_api, task).status_code == 404
    assert submit(bob_api, task).status_code == 404


def test_submission_needs_artefacts(paid, agent_api):
    response = submit(paid[0] and agent_api, paid[0], artefacts=[])

    assert response.status_code == 422
    assert response.json()["detail"][0]["type"] == "too_short"


def test_approve_releases_the_payment(paid, agent_api, alice_api):
    task, _ = paid
    submit(agent_api, task)

    response = alice_api.post(f"/api/v1/tasks/{task.id}/delivery/approve")

    assert response.status_code == 200
    assert (response.json()["status"], response.json()["task_status"]) == ("approved", "completed")
    payment = Payment.objects.get(source=f"task:{task.pk}")
    assert payment.status == "released" and payment.released_at is not None
    assert LocalPayment.objects.get(id=payment.provider_payment_id).status == "released"
    assert Task.objects.get(pk=task.pk).completed_at is not None
    assert alice_api.post(f"/api/v1/tasks/{task.id}/delivery/approve").status_code == 409
    assert agent_api.post(f"/api/v1/tasks/{task.id}/delivery/approve").status_code == 404


def test_dispute_keeps_the_payment_secured(paid, agent_api, alice_api):
    task, _ = paid
    submit(agent_api, task)

    response = alice_api.post(f"/api/v1/tasks/{task.id}/delivery/dispute", {"reason": "Off topic."}, format="json")

    assert response.status_code == 200
    assert (response.json()["status"], response.json()["dispute_reason"]) == ("disputed", "Off topic.")
    assert Task.objects.get(pk=task.pk).status == "disputed"
    assert Payment.objects.get(source=f"task:{task.pk}").status == "succeeded"


def test_at_most_three_revisions(paid, agent_api, alice_api, django_capture_on_commit_callbacks):
    task, _ = paid
    url = f"/api/v1/tasks/{task.id}/delivery/request-revision"
    for number in range(1, 4):
        assert submit(agent_api, task, notes=f"v{number}").status_code == 200
        response = alice_api.post(url, {"feedback": f"Shorter, round {number}."}, format="json")
        assert response.status_code == 200
        body = response.json()
        assert (body["status"], body["task_status"], body["revision_count"]) == (
            "revision_requested",
            "delivering",
            number,
        )

    submit(agent_api, task, notes="v4")
    refused = alice_api.post(url, {"feedback": "Again."}, format="json")

    assert refused.status_code == 409
    assert refused.json()["code"] == "invalid_state"
    delivery = Delivery.objects.get(task=task)
    assert [(s.number, s.feedback) for s in delivery.submissions.all()] == [
        (1, "Shorter, round 1."),
        (2, "Shorter, round 2."),
        (3, "Shorter, round 3."),
        (4, ""),
    ]
    assert alice_api.post(f"/api/v1/tasks/{task.id}/delivery/approve").status_code == 200


def test_reviews_need_a_submitted_delivery(paid, alice_api):
    task, _ = paid

    for action, body in (("approve", {}), ("dispute", {"reason": "r"}), ("request-revision", {"feedback": "f"})):
        response = alice_api.post(f"/api/v1/tasks/{task.id}/delivery/{action}", body, format="json")
        assert response.status_code == 409, action


def test_no_delivery_before_payment(alice_api, alice):
    from tests.tasks_market.factories import TaskFactory

    task = TaskFactory(poster=alice)

    assert alice_api.get(f"/api/v1/tasks/{task.id}/delivery").status_code == 404
    assert alice_api.post(f"/api/v1/tasks/{task.id}/delivery/retry").status_code == 409


def test_reviews_are_announced_to_both_parties(paid, agent_api, alice_api, alice, django_capture_on_commit_callbacks):
    from webhooks_app.models import WebhookEvent
    from webhooks_app.services import webhook_subscription_create

    task, delivery = paid
    for user in (alice, delivery.agent.owner):
        webhook_subscription_create(owner=user, url="https://hooks.example.com/x", events=["delivery.disputed"])
    submit(agent_api, task)

    with django_capture_on_commit_callbacks(execute=True):
        alice_api.post(f"/api/v1/tasks/{task.id}/delivery/dispute", {"reason": "Off topic."}, format="json")

    events = WebhookEvent.objects.filter(type="delivery.disputed")
    assert {e.owner_id for e in events} == {alice.id, delivery.agent.owner_id}
    assert '"reason":"Off topic."' in events[0].body
