"""Agent reputation from verified outcomes (docs/decisions.md#agent-reputation): every figure against a
hand-computed fixture, driven through the real transitions (approve, dispute and resolve, refund after
release), including the tasks that must not count."""

from __future__ import annotations

import io
from decimal import Decimal

import pytest
from django.core.management import call_command

from tasks_market.models import AgentReputation, DeliveryStatus, TaskOutcome
from tasks_market.services.reputation import bayesian_score, money_weight, reputation_differences
from tests.support.factories import UserFactory
from tests.tasks_market.factories import AgentFactory, delivering_task
from tests.tasks_market.outcomes import finished

pytestmark = pytest.mark.django_db

HOUR = 3600


@pytest.fixture
def record():
    """Agent A's eight tasks and agent B's one, each with a known outcome."""
    poster, ann, ben = UserFactory(), UserFactory(), UserFactory()
    a, b = AgentFactory(owner=ann), AgentFactory(owner=ben)
    finished(poster, a, amount="90.00", hours=2, rating=5)  # 1 approved first time, on time; w = 2
    finished(poster, a, amount="990.00", revisions=1, hours=4, rating=4)  # 2 after a revision; w = 3
    finished(poster, a, amount="9990.00", late=True, hours=6)  # 3 first time but late; w = 4
    finished(poster, a, amount="90.00", end="release_full", hours=8, rating=2)  # 4 disputed, released
    finished(poster, a, amount="90.00", end="split", hours=10)  # 5 disputed, split
    finished(poster, a, amount="90.00", end="refund_full", hours=12)  # 6 disputed, refunded: not completed
    finished(poster, a, amount="90.00", end="refund_after_release", hours=1, rating=1)  # 7 refunded in full
    finished(ann, a, amount="90.00", hours=1)  # 8 self-dealt: its poster owns the agent
    finished(poster, b, amount="90.00", rating=5)
    return {"a": a, "b": b, "poster": poster}


def test_the_money_weight_and_the_score_formula():
    assert [money_weight(Decimal(x)) for x in ("0", "90", "990", "9990")] == [1, 2, 3, 4]
    assert bayesian_score(Decimal(0), Decimal(0)) == Decimal("3.5")  # no rating: the prior mean
    # One 5-star review of a 90 task: (5·3.5 + 2·5) / (5 + 2).
    assert bayesian_score(Decimal(10), Decimal(2)) == Decimal("3.9286")


def test_every_figure_of_the_fixture(record, alice_api):
    body = alice_api.get(f"/api/v1/agents/{record['a'].id}/reputation").json()

    assert body["completed_tasks"] == 5  # 1-5; not 6 (refunded), 7 (refunded after release), 8 (self-dealt)
    assert body["approved_without_revision"] == {"count": 2, "of": 5, "rate": 0.4}  # 1 and 3
    assert body["on_time"] == {"count": 4, "of": 5, "rate": 0.8}  # all but 3
    assert body["disputes"] == {"total": 3, "refund_full": 1, "release_full": 1, "split": 1}
    assert body["median_delivery_seconds"] == 6 * HOUR  # of 2, 4, 6, 8, 10 hours
    assert body["not_counted"] == {"self_dealt": 1, "refunded_in_full": 1}
    # Ratings 5 (w 2), 4 (w 3), 2 (w 2); task 7's 1 star left with its refund: (17.5 + 26) / (5 + 7).
    assert body["rating"] == {
        "score": 3.625,
        "count": 3,
        "prior_mean": 3.5,
        "prior_weight": 5.0,
        "weight_sum": 7.0,
        "weighted_sum": 26.0,
        "formula": "score = (C·m + Σ w·rating) / (C + Σ w)",
    }
    assert body["benchmark"] == {"score": None, "benchmarked_at": None}
    assert TaskOutcome.objects.filter(agent=record["a"], counted=False).count() == 2
    # B: one 5-star review does not rank it at 5.
    b = alice_api.get(f"/api/v1/agents/{record['b'].id}/reputation").json()
    assert (b["completed_tasks"], b["rating"]["score"], b["rating"]["count"]) == (1, 3.9286, 1)


def test_the_kept_record_matches_a_recount_from_history(record):
    assert reputation_differences() == {}
    call_command("reputation_check", stdout=io.StringIO())
    AgentReputation.objects.filter(pk=record["a"].pk).update(on_time=9)

    assert reputation_differences() == {record["a"].pk: {"on_time": (9, 4)}}
    out = io.StringIO()
    with pytest.raises(SystemExit):
        call_command("reputation_check", stdout=out)
    assert f"agent {record['a'].pk}: on_time kept 9 recounted 4" in out.getvalue()


def test_an_agent_with_no_record_shows_the_prior_and_a_missing_one_is_404(alice_api, bob):
    agent = AgentFactory(owner=bob)
    body = alice_api.get(f"/api/v1/agents/{agent.id}/reputation").json()

    assert (body["completed_tasks"], body["rating"]["score"], body["median_delivery_seconds"]) == (0, 3.5, None)
    assert body["approved_without_revision"] == {"count": 0, "of": 0, "rate": None}
    assert "owner" not in body and "endpoint_url" not in body
    missing = alice_api.get("/api/v1/agents/00000000-0000-0000-0000-000000000000/reputation")
    assert (missing.status_code, missing.json()["code"]) == (404, "not_found")


def test_the_backfill_records_tasks_that_ended_before_outcomes_were_kept(alice_api):
    agent = AgentFactory()
    task, _ = delivering_task(agent=agent, delivery_status=DeliveryStatus.APPROVED)  # completed, no outcome
    delivering_task(agent=agent, delivery_status=DeliveryStatus.SUBMITTED)  # still in review: nothing
    out = io.StringIO()

    call_command("reputation_check", "--backfill", stdout=out)
    call_command("reputation_check", "--backfill", stdout=io.StringIO())  # a second run changes nothing

    assert "1 outcome(s) recorded." in out.getvalue()
    assert list(TaskOutcome.objects.values_list("task_id", "kind")) == [(task.pk, "approved")]
    assert alice_api.get(f"/api/v1/agents/{agent.id}/reputation").json()["completed_tasks"] == 1
