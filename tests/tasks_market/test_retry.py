"""Retrying a delivery (docs/decisions.md#states) and the beat sweep of stuck ones."""

from __future__ import annotations

import io
import threading
from datetime import timedelta

import pytest
from django.core.management import call_command
from django.db import connection
from django.utils import timezone

from tasks_market.models import Delivery, DeliveryAttempt
from tasks_market.services.dispatch import SWEEP_MAX_RETRIES, deliveries_sweep
from tests.conftest import client_with_token, jwt_for
from tests.tasks_market.conftest import post_task
from tests.tasks_market.factories import AgentFactory, delivering_task

STUCK = timedelta(minutes=31)


def make(agent_server, status, **extra):
    agent = AgentFactory(endpoint_url=agent_server.url)
    return delivering_task(agent=agent, delivery_status=status, **extra)


def retry(task, client=None):
    client = client or client_with_token(jwt_for(task.poster))
    return client.post(f"/api/v1/tasks/{task.id}/delivery/retry")


@pytest.mark.django_db
@pytest.mark.parametrize(
    ("status", "extra"),
    [
        ("pending", {}),
        ("failed", {"failed_at": timezone.now()}),
        ("dispatched", {"dispatched_at": timezone.now() - STUCK}),
    ],
)
def test_retry_queues_a_new_attempt(agent_server, django_capture_on_commit_callbacks, status, extra):
    task, delivery = make(agent_server, status, **extra)

    with django_capture_on_commit_callbacks(execute=True):
        response = retry(task)

    assert response.status_code == 202, response.content
    body = response.json()
    assert (body["id"], body["status"]) == (str(delivery.id), "pending")
    assert DeliveryAttempt.objects.filter(delivery=delivery).count() == 1
    assert len(agent_server.requests) == 1
    delivery.refresh_from_db()
    assert delivery.status == "dispatched"
    expected_round = 2 if status == "dispatched" else 1  # a stuck dispatch is sent as a new message
    assert agent_server.requests[0]["headers"]["webhook-id"] == f"dlv_{delivery.id.hex}_{expected_round}"


@pytest.mark.django_db
def test_the_winning_agents_owner_may_retry_too(agent_server, django_capture_on_commit_callbacks):
    task, delivery = make(agent_server, "failed")

    with django_capture_on_commit_callbacks(execute=True):
        response = retry(task, client_with_token(jwt_for(delivery.agent.owner)))

    assert response.status_code == 202


@pytest.mark.django_db
@pytest.mark.parametrize(
    "status", ["dispatched", "submitted", "approved", "disputed", "revision_requested", "in_flight", "cancelled"]
)
def test_retry_is_refused_in_other_states(agent_server, alice, alice_api, status):
    if status == "cancelled":
        task = post_task(alice_api)
        alice_api.post(f"/api/v1/tasks/{task['id']}/cancel")
        response = alice_api.post(f"/api/v1/tasks/{task['id']}/delivery/retry")
    else:
        extra = {"claimed_at": timezone.now()} if status == "in_flight" else {}
        task, _ = make(agent_server, "pending" if status == "in_flight" else status, **extra)
        response = retry(task)

    assert response.status_code == 409, response.content
    assert response.json()["code"] == "invalid_state"
    assert not DeliveryAttempt.objects.exists()
    assert agent_server.requests == []


@pytest.mark.django_db
def test_retry_is_404_for_anyone_else(agent_server, bob_api, api):
    task, _ = make(agent_server, "failed")

    assert bob_api.post(f"/api/v1/tasks/{task.id}/delivery/retry").status_code == 404
    assert api.post(f"/api/v1/tasks/{task.id}/delivery/retry").status_code == 401


@pytest.mark.django_db(transaction=True)
@pytest.mark.parametrize("status", ["failed", "pending"])
def test_two_concurrent_retries_make_one_attempt(agent_server, status):
    agent_server.delay = 0.3  # the first attempt is still in flight when the second retry arrives
    task, delivery = make(agent_server, status)
    token = jwt_for(task.poster)
    barrier = threading.Barrier(2)
    codes: list[int] = []

    def run():
        client = client_with_token(token)
        try:
            barrier.wait()
            codes.append(client.post(f"/api/v1/tasks/{task.id}/delivery/retry").status_code)
        finally:
            connection.close()

    threads = [threading.Thread(target=run) for _ in range(2)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()

    assert sorted(codes) == [202, 409]
    assert DeliveryAttempt.objects.filter(delivery=delivery).count() == 1
    assert len(agent_server.requests) == 1


@pytest.mark.django_db
def test_the_sweep_resends_a_stuck_dispatch_a_bounded_number_of_times(agent_server, django_capture_on_commit_callbacks):
    _, delivery = make(agent_server, "dispatched", dispatched_at=timezone.now() - STUCK)

    with django_capture_on_commit_callbacks(execute=True):
        first = deliveries_sweep()
    with django_capture_on_commit_callbacks(execute=True):
        again = deliveries_sweep()

    assert (first.retried, again.retried) == (1, 0)  # the re-dispatch is fresh now
    delivery.refresh_from_db()
    assert (delivery.status, delivery.round, delivery.sweep_retries) == ("dispatched", 2, 1)
    Delivery.objects.filter(pk=delivery.pk).update(
        dispatched_at=timezone.now() - STUCK, sweep_retries=SWEEP_MAX_RETRIES
    )
    assert deliveries_sweep().retried == 0
    assert len(agent_server.requests) == 1


@pytest.mark.django_db
def test_the_sweep_requeues_lost_dispatches_and_releases_dead_claims(agent_server):
    _, lost = make(agent_server, "pending", next_attempt_at=timezone.now() - timedelta(minutes=5))
    _, dead = make(agent_server, "pending", claimed_at=timezone.now() - timedelta(minutes=10))
    interrupted = DeliveryAttempt.objects.create(delivery=dead, number=1, round=1, url=agent_server.url)

    result = deliveries_sweep()

    assert (result.released, result.requeued) == (1, 1)
    lost.refresh_from_db()
    dead.refresh_from_db()
    assert (lost.status, dead.status) == ("dispatched", "dispatched")
    interrupted.refresh_from_db()
    assert interrupted.status == "failed" and interrupted.error.startswith("Interrupted")
    assert len(agent_server.requests) == 2


@pytest.mark.django_db(transaction=True)
def test_two_sweeps_at_once_resend_once(agent_server):
    agent_server.delay = 0.3
    _, delivery = make(agent_server, "dispatched", dispatched_at=timezone.now() - STUCK)
    barrier = threading.Barrier(2)

    def run():
        try:
            barrier.wait()
            deliveries_sweep()
        finally:
            connection.close()

    threads = [threading.Thread(target=run) for _ in range(2)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()

    assert DeliveryAttempt.objects.filter(delivery=delivery).count() == 1
    assert len(agent_server.requests) == 1


@pytest.mark.django_db
def test_sweep_deliveries_command_reports_progress(agent_server, django_capture_on_commit_callbacks):
    _, delivery = make(agent_server, "dispatched", dispatched_at=timezone.now() - STUCK)
    out = io.StringIO()

    with django_capture_on_commit_callbacks(execute=True):
        call_command("sweep_deliveries", stdout=out)

    assert f"delivery {delivery.id}: stuck dispatch sent again" in out.getvalue()
    assert "1 retried" in out.getvalue()
    assert len(agent_server.requests) == 1


@pytest.mark.django_db
def test_the_beat_job_also_judges_bids_whose_judge_job_was_lost():
    from tasks_market.models import BidJudgement
    from tasks_market.tasks import sweep_deliveries
    from tests.tasks_market.factories import BidFactory

    lost = BidFactory()
    fresh = BidFactory()
    BidJudgement.objects.filter(bid=lost).update(created_at=timezone.now() - timedelta(minutes=10))

    assert sweep_deliveries()["judged"] == 1
    assert BidJudgement.objects.get(bid=lost).status == "completed"
    assert BidJudgement.objects.get(bid=fresh).status == "pending"
