"""The business counters of core/ops/metrics.py are counted at the service points, once the change commits
(docs/operations.md#metrics-and-traces): a settled payment, the agent dispatch it starts, credits spent.

Metrics are off in the test settings (no PROMETHEUS_MULTIPROC_DIR); the flag is turned on for these tests and
the counters read from prometheus-client's in-process registry.
"""

from __future__ import annotations

import uuid

import pytest

from core.ops import metrics
from tests.support.credits import credits_set
from tests.tasks_market.conftest import selected_task, simulate_payment

pytestmark = pytest.mark.django_db


def total(counter, **labels: str) -> float:
    """The counter's value summed over the label sets that match `labels`."""
    return sum(
        sample.value
        for family in counter.collect()
        for sample in family.samples
        if sample.name.endswith("_total") and all(sample.labels.get(k) == v for k, v in labels.items())
    )


@pytest.fixture
def metrics_on(monkeypatch):
    monkeypatch.setattr(metrics, "ENABLED", True)


def test_a_settled_payment_and_its_dispatch_are_counted_once_committed(
    metrics_on, api, alice_api, bob_api, agent_server, django_capture_on_commit_callbacks
):
    flow = selected_task(alice_api, bob_api, agent_server.url)
    agent_server.secret = flow["agent"]["signing_secret"]
    settled, dispatched = total(metrics.PAYMENTS_SETTLED), total(metrics.AGENT_DISPATCHES, outcome="dispatched")

    with django_capture_on_commit_callbacks(execute=True):
        response = simulate_payment(api, flow["payment"]["provider_payment_id"])
    assert response.json()["status"] == "processed"
    assert total(metrics.PAYMENTS_SETTLED) == settled + 1
    assert total(metrics.AGENT_DISPATCHES, outcome="dispatched") == dispatched + 1


def test_credits_spent_on_an_image_are_counted(metrics_on, alice_api, alice, django_capture_on_commit_callbacks):
    credits_set(alice, 3)
    spent = total(metrics.CREDITS_SPENT)
    with django_capture_on_commit_callbacks(execute=True):
        response = alice_api.post(
            "/api/v1/allmodelchat/generate/image",
            {"prompt": "A lighthouse at dawn", "conversation_id": str(uuid.uuid4())},
            format="json",
        )
    assert response.status_code == 200, response.content
    assert total(metrics.CREDITS_SPENT) == spent + 1
