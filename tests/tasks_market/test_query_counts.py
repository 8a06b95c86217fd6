"""List endpoints make the same number of queries for 1 row as for 25."""

from __future__ import annotations

import pytest
from django.db import connection
from django.test.utils import CaptureQueriesContext

from tasks_market.models import Artefact, BenchmarkRun, DeliverySubmission
from tests.tasks_market.factories import AgentFactory, BidFactory, TaskFactory, delivering_task

pytestmark = pytest.mark.django_db


def queries(client, path: str) -> int:
    client.get(path)  # warm the per-process caches (rate-limit overrides) so only the view's queries differ
    with CaptureQueriesContext(connection) as captured:
        response = client.get(path)
    assert response.status_code == 200, response.content
    return len(captured)


def artefact(**owner) -> Artefact:
    return Artefact.objects.create(name="a.txt", content_type="text/plain", text="a", size=1, sha256="0" * 64, **owner)


def grow(build, count: int) -> None:
    for _ in range(count):
        build()


@pytest.mark.parametrize("path", ["/api/v1/tasks?scope=mine", "/api/v1/tasks?scope=open", "/api/v1/agents"])
def test_top_level_lists(alice_api, alice, path):
    def build():
        TaskFactory(poster=alice)
        AgentFactory(owner=alice)

    build()
    one = queries(alice_api, f"{path}{'&' if '?' in path else '?'}limit=100")
    grow(build, 24)
    many = queries(alice_api, f"{path}{'&' if '?' in path else '?'}limit=100")

    assert one == many


def test_bids_list_for_the_poster_and_a_bidder(alice_api, bob_api, alice, bob):
    task = TaskFactory(poster=alice)

    def build():
        BidFactory(task=task, agent=AgentFactory(owner=bob))

    build()
    one = (
        queries(alice_api, f"/api/v1/tasks/{task.id}/bids?limit=100"),
        queries(bob_api, f"/api/v1/tasks/{task.id}/bids?limit=100"),
    )
    grow(build, 24)
    many = (
        queries(alice_api, f"/api/v1/tasks/{task.id}/bids?limit=100"),
        queries(bob_api, f"/api/v1/tasks/{task.id}/bids?limit=100"),
    )

    assert one == many


def test_benchmarks_and_artefacts(alice_api, alice):
    agent = AgentFactory(owner=alice)
    bid = BidFactory(task=TaskFactory(poster=alice))

    def build():
        BenchmarkRun.objects.create(agent=agent, status="completed", score=50.0)
        artefact(bid=bid)

    paths = [
        f"/api/v1/agents/{agent.id}/benchmarks?limit=100",
        f"/api/v1/tasks/{bid.task_id}/bids/{bid.id}/artefacts?limit=100",
    ]
    build()
    one = [queries(alice_api, p) for p in paths]
    grow(build, 24)
    many = [queries(alice_api, p) for p in paths]

    assert one == many


def test_delivery_with_its_submissions(alice_api, alice):
    task, delivery = delivering_task(poster=alice, delivery_status="submitted")
    first = DeliverySubmission.objects.get(delivery=delivery)
    artefact(submission=first)
    one = queries(alice_api, f"/api/v1/tasks/{task.id}/delivery")
    for number in range(2, 5):
        submission = DeliverySubmission.objects.create(delivery=delivery, number=number, submitted_by=alice)
        grow(lambda s=submission: artefact(submission=s), 5)

    assert queries(alice_api, f"/api/v1/tasks/{task.id}/delivery") == one
