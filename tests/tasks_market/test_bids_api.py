from __future__ import annotations

import hashlib

import pytest

from tasks_market.models import Bid, BidJudgement
from tests.tasks_market.conftest import place_bid, post_task, register_agent
from tests.tasks_market.factories import AgentFactory, text_artefact

pytestmark = pytest.mark.django_db


@pytest.fixture
def task(alice_api) -> dict:
    return post_task(alice_api)


@pytest.fixture
def bob_agent(bob_api) -> dict:
    return register_agent(bob_api)


def test_bid_is_created_and_judged(bob_api, task, bob_agent, django_capture_on_commit_callbacks):
    with django_capture_on_commit_callbacks(execute=True):
        bid = place_bid(bob_api, task["id"], bob_agent["id"])

    assert (bid["status"], bid["agent_name"], bid["amount"]) == ("pending", "Copybot", "150.00")
    judge = bob_api.get(f"/api/v1/tasks/{task['id']}/bids/{bid['id']}/judge").json()
    assert judge["status"] == "completed"
    assert judge["method"] == "weighted-criteria-v1"
    assert [c["name"] for c in judge["criteria"]] == ["price", "benchmark", "eta", "relevance"]
    by_name = {c["name"]: c for c in judge["criteria"]}
    assert by_name["price"]["score"] == 0.75  # 150 of 200: 1.5 - 0.75
    assert by_name["benchmark"]["score"] == 0.0  # never benchmarked
    assert by_name["eta"]["score"] > 0.9  # 24 h of 168
    assert judge["score"] == pytest.approx(100 * sum(c["weight"] * c["score"] for c in judge["criteria"]), abs=0.1)


def test_judge_is_deterministic(bob, alice):
    from tasks_market.services.bids import bid_judge
    from tests.tasks_market.factories import BidFactory, TaskFactory

    task = TaskFactory(poster=alice)
    first = BidFactory(task=task, agent=AgentFactory(owner=bob, benchmark_score=80.0))
    second = BidFactory(task=task, agent=AgentFactory(owner=bob, benchmark_score=80.0))
    Bid.objects.filter(pk=second.pk).update(created_at=first.created_at)
    a, b = bid_judge(bid_id=first.pk), bid_judge(bid_id=second.pk)

    assert a.score == b.score and a.criteria == b.criteria
    assert {c["name"]: c["score"] for c in a.criteria}["benchmark"] == 0.8


def test_poster_sees_every_bid_a_bidder_only_theirs(alice_api, bob_api, task, bob_agent, staff_api):
    place_bid(bob_api, task["id"], bob_agent["id"])
    staff_agent = register_agent(staff_api)
    place_bid(staff_api, task["id"], staff_agent["id"])

    assert alice_api.get(f"/api/v1/tasks/{task['id']}/bids").json()["total"] == 2
    mine = bob_api.get(f"/api/v1/tasks/{task['id']}/bids").json()
    assert [b["agent_id"] for b in mine["items"]] == [bob_agent["id"]]


def test_one_live_bid_per_agent(bob_api, task, bob_agent):
    first = place_bid(bob_api, task["id"], bob_agent["id"])

    again = bob_api.post(
        f"/api/v1/tasks/{task['id']}/bids",
        {"agent_id": bob_agent["id"], "amount": 1, "currency": "usd", "proposal": "p", "eta_hours": 1},
        format="json",
    )
    assert again.status_code == 409
    assert again.json()["code"] == "bid_exists"

    assert bob_api.post(f"/api/v1/tasks/{task['id']}/bids/{first['id']}/withdraw").status_code == 200
    assert place_bid(bob_api, task["id"], bob_agent["id"])["status"] == "pending"
    assert Bid.objects.filter(task_id=task["id"]).count() == 2


def test_no_bid_on_ones_own_task(alice_api, task):
    agent = register_agent(alice_api)

    response = alice_api.post(
        f"/api/v1/tasks/{task['id']}/bids",
        {"agent_id": agent["id"], "amount": 1, "currency": "usd", "proposal": "p", "eta_hours": 1},
        format="json",
    )

    assert response.status_code == 409
    assert response.json()["code"] == "own_task"


def test_bid_must_use_ones_own_agent_and_the_task_currency(bob_api, task, alice):
    someone_elses = AgentFactory(owner=alice)
    own = register_agent(bob_api)
    url = f"/api/v1/tasks/{task['id']}/bids"
    base = {"amount": 1, "proposal": "p", "eta_hours": 1}

    wrong_agent = bob_api.post(url, {**base, "agent_id": str(someone_elses.id), "currency": "usd"}, format="json")
    wrong_currency = bob_api.post(url, {**base, "agent_id": own["id"], "currency": "eur"}, format="json")

    assert wrong_agent.status_code == 422
    assert wrong_agent.json()["detail"][0]["loc"] == ["body", "agent_id"]
    assert wrong_currency.status_code == 422
    assert wrong_currency.json()["detail"][0]["loc"] == ["body", "currency"]
    assert not Bid.objects.exists()


def test_no_bid_on_a_task_that_is_not_open(alice_api, bob_api, task, bob_agent):
    bid = place_bid(bob_api, task["id"], bob_agent["id"])
    alice_api.post(f"/api/v1/tasks/{task['id']}/bids/{bid['id']}/select")
    second_agent = register_agent(bob_api, name="Second")
    body = {"agent_id": second_agent["id"], "amount": 1, "currency": "usd", "proposal": "p", "eta_hours": 1}

    response = bob_api.post(f"/api/v1/tasks/{task['id']}/bids", body, format="json")

    assert response.status_code == 409  # bob's bid is the selected one, so he sees it: but it is awaiting payment
    assert response.json()["code"] == "invalid_state"
    alice_api.post(f"/api/v1/tasks/{task['id']}/cancel")
    assert bob_api.post(f"/api/v1/tasks/{task['id']}/bids", body, format="json").status_code == 404  # gone from view


def test_no_bid_on_a_closed_task_one_cannot_see(alice_api, staff_api, task):
    alice_api.post(f"/api/v1/tasks/{task['id']}/cancel")
    agent = register_agent(staff_api)
    body = {"agent_id": agent["id"], "amount": 1, "currency": "usd", "proposal": "p", "eta_hours": 1}

    assert staff_api.post(f"/api/v1/tasks/{task['id']}/bids", body, format="json").status_code == 404


def test_sample_artefacts_are_listed(alice_api, bob_api, task, bob_agent, staff_api):
    url_artefact = {
        "name": "deck.pdf",
        "content_type": "application/pdf",
        "url": "https://files.example.com/d.pdf",
        "size": 1234,
        "sha256": hashlib.sha256(b"x").hexdigest(),
    }
    bid = place_bid(bob_api, task["id"], bob_agent["id"], sample_artefacts=[text_artefact("hello"), url_artefact])

    listed = alice_api.get(f"/api/v1/tasks/{task['id']}/bids/{bid['id']}/artefacts").json()

    assert listed["total"] == 2
    assert [(a["name"], a["text"], a["url"]) for a in listed["items"]] == [
        ("copy.md", "hello", None),
        ("deck.pdf", None, "https://files.example.com/d.pdf"),
    ]
    assert listed["items"][0]["size"] == 5
    assert bob_api.get(f"/api/v1/tasks/{task['id']}/bids/{bid['id']}/artefacts").status_code == 200
    assert staff_api.get(f"/api/v1/tasks/{task['id']}/bids/{bid['id']}/artefacts").status_code == 404
    assert staff_api.get(f"/api/v1/tasks/{task['id']}/bids/{bid['id']}/judge").status_code == 404


@pytest.mark.parametrize(
    "artefact",
    [
        {"name": "a", "content_type": "text/plain"},  # neither url nor text
        {"name": "a", "content_type": "text/plain", "text": "x", "url": "https://e.com/a"},  # both
        {"name": "a", "content_type": "text/plain", "text": "x", "size": 99},  # wrong size
        {"name": "a", "content_type": "plain", "text": "x"},  # not a media type
        {"name": "a", "content_type": "text/plain", "url": "https://e.com/a"},  # url without size/sha256
    ],
)
def test_bad_artefacts_are_422(bob_api, task, bob_agent, artefact):
    response = bob_api.post(
        f"/api/v1/tasks/{task['id']}/bids",
        {
            "agent_id": bob_agent["id"],
            "amount": 1,
            "currency": "usd",
            "proposal": "p",
            "eta_hours": 1,
            "sample_artefacts": [artefact],
        },
        format="json",
    )

    assert response.status_code == 422, response.content
    assert response.json()["detail"][0]["loc"][:3] == ["body", "sample_artefacts", 0]


def test_withdraw_only_ones_own_pending_bid(alice_api, bob_api, task, bob_agent):
    bid = place_bid(bob_api, task["id"], bob_agent["id"])
    url = f"/api/v1/tasks/{task['id']}/bids/{bid['id']}/withdraw"

    assert alice_api.post(url).status_code == 404
    assert bob_api.post(url).json()["status"] == "withdrawn"
    assert bob_api.post(url).status_code == 409


def test_judgement_exists_for_every_bid(bob_api, task, bob_agent):
    bid = place_bid(bob_api, task["id"], bob_agent["id"])  # no commit: the judge has not run

    assert BidJudgement.objects.get(bid_id=bid["id"]).status == "pending"
    body = bob_api.get(f"/api/v1/tasks/{task['id']}/bids/{bid['id']}/judge").json()
    assert (body["status"], body["score"], body["criteria"]) == ("pending", None, [])


def test_at_most_ten_sample_artefacts(bob_api, task, bob_agent):
    body = {
        "agent_id": bob_agent["id"],
        "amount": 1,
        "currency": "usd",
        "proposal": "p",
        "eta_hours": 1,
        "sample_artefacts": [text_artefact()] * 11,
    }

    response = bob_api.post(f"/api/v1/tasks/{task['id']}/bids", body, format="json")

    assert response.status_code == 422
    assert response.json()["detail"][0]["type"] == "too_long"
