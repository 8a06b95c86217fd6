from __future__ import annotations

from datetime import timedelta

import pytest
from django.utils import timezone
from standardwebhooks import Webhook

from tasks_market.models import Agent, BenchmarkRun
from tests.tasks_market.conftest import register_agent
from tests.tasks_market.factories import AgentFactory

pytestmark = pytest.mark.django_db


def test_register_returns_the_secret_once(alice_api, alice):
    agent = register_agent(alice_api, capabilities=["writing", "writing", "research"])

    assert agent["signing_secret"].startswith("whsec_")
    assert agent["capabilities"] == ["writing", "research"]
    assert Agent.objects.get(id=agent["id"]).owner == alice
    detail = alice_api.get(f"/api/v1/agents/{agent['id']}").json()
    listed = alice_api.get("/api/v1/agents").json()
    assert "signing_secret" not in detail
    assert listed["total"] == 1 and "signing_secret" not in listed["items"][0]
    assert agent["signing_secret"] not in str(detail) + str(listed)


def test_an_api_key_can_register_and_manage_agents(alice_key_api):
    agent = register_agent(alice_key_api)

    assert alice_key_api.get(f"/api/v1/agents/{agent['id']}").status_code == 200
    assert alice_key_api.post(f"/api/v1/agents/{agent['id']}/rotate-secret").status_code == 200


def test_register_validates_the_body(alice_api):
    response = alice_api.post("/api/v1/agents", {"name": "", "endpoint_url": "not a url"}, format="json")

    assert response.status_code == 422
    assert {tuple(e["loc"]) for e in response.json()["detail"]} == {("body", "name"), ("body", "endpoint_url")}


def test_endpoint_update_refuses_private_addresses_when_not_allowed(alice_api, settings):
    agent = register_agent(alice_api)
    settings.OUTBOUND_ALLOW_PRIVATE_URLS = False
    url = f"/api/v1/agents/{agent['id']}/endpoint"

    for refused in ("http://127.0.0.1:9/hook", "https://127.0.0.1/hook", "https://10.1.2.3/x", "ftp://example.com/"):
        response = alice_api.patch(url, {"endpoint_url": refused}, format="json")
        assert response.status_code == 422, refused
        assert response.json()["detail"][0]["loc"] == ["body", "endpoint_url"]

    settings.OUTBOUND_ALLOW_PRIVATE_URLS = True
    response = alice_api.patch(url, {"endpoint_url": "http://127.0.0.1:9/hook"}, format="json")
    assert response.status_code == 200
    assert Agent.objects.get(id=agent["id"]).endpoint_url == "http://127.0.0.1:9/hook"


def test_rotation_keeps_the_old_secret_signing_for_a_day(alice_api):
    from tasks_market.services.agents import agent_secrets

    agent = register_agent(alice_api)
    rotated = alice_api.post(f"/api/v1/agents/{agent['id']}/rotate-secret").json()

    assert rotated["signing_secret"] != agent["signing_secret"]
    row = Agent.objects.get(id=agent["id"])
    assert agent_secrets(row) == [rotated["signing_secret"], agent["signing_secret"]]
    assert agent_secrets(row, now=timezone.now() + timedelta(hours=25)) == [rotated["signing_secret"]]
    assert "signing_secret" not in alice_api.get(f"/api/v1/agents/{agent['id']}").json()


def test_benchmark_sends_signed_cases_and_stores_a_scored_run(
    alice_api, agent_server, django_capture_on_commit_callbacks
):
    agent = register_agent(alice_api, url=agent_server.url)
    agent_server.secret = agent["signing_secret"]

    with django_capture_on_commit_callbacks(execute=True):
        response = alice_api.post(f"/api/v1/agents/{agent['id']}/benchmark")

    assert response.status_code == 202
    assert response.json()["status"] == "queued"
    assert [r["verified"] for r in agent_server.requests] == [True, True, True]
    assert [b["data"]["case"] for b in agent_server.bodies("agent.benchmark")] == [
        "acknowledge",
        "summarise",
        "classify",
    ]
    runs = alice_api.get(f"/api/v1/agents/{agent['id']}/benchmarks").json()
    assert runs["total"] == 1
    run = runs["items"][0]
    assert run["status"] == "completed"
    assert (run["cases_passed"], run["cases_total"]) == (3, 3)
    assert 70 < run["score"] <= 100  # all passed; latency on loopback is near zero
    assert alice_api.get(f"/api/v1/agents/{agent['id']}").json()["benchmark_score"] == run["score"]


def test_a_failing_endpoint_scores_zero(alice_api, agent_server, django_capture_on_commit_callbacks):
    agent = register_agent(alice_api, url=agent_server.url)
    agent_server.status = 500

    with django_capture_on_commit_callbacks(execute=True):
        alice_api.post(f"/api/v1/agents/{agent['id']}/benchmark")

    run = BenchmarkRun.objects.get(agent_id=agent["id"])
    assert (run.status, run.score, run.cases_passed) == ("completed", 0.0, 0)
    assert [r["status_code"] for r in run.results] == [500, 500, 500]


def test_only_one_benchmark_at_a_time(alice_api, alice):
    agent = AgentFactory(owner=alice)
    BenchmarkRun.objects.create(agent=agent)  # queued, its worker has not picked it up yet

    response = alice_api.post(f"/api/v1/agents/{agent.id}/benchmark")

    assert response.status_code == 409
    assert response.json()["code"] == "benchmark_running"


def test_a_lost_benchmark_does_not_block_the_next_one(alice_api, alice):
    agent = AgentFactory(owner=alice)
    lost = BenchmarkRun.objects.create(agent=agent, status="running")
    BenchmarkRun.objects.filter(pk=lost.pk).update(created_at=timezone.now() - timedelta(hours=1))

    assert alice_api.post(f"/api/v1/agents/{agent.id}/benchmark").status_code == 202
    lost.refresh_from_db()
    assert lost.status == "failed"


def test_benchmark_signature_verifies_with_the_library(agent_server, alice_api, django_capture_on_commit_callbacks):
    agent = register_agent(alice_api, url=agent_server.url)

    with django_capture_on_commit_callbacks(execute=True):
        alice_api.post(f"/api/v1/agents/{agent['id']}/benchmark")

    request = agent_server.requests[0]
    assert request["headers"]["webhook-id"].startswith("bench_")
    Webhook(agent["signing_secret"]).verify(request["body"], request["headers"])  # raises if wrong
