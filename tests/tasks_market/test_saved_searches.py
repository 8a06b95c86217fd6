"""Saved searches that push (docs/decisions.md#saved-searches): the API, which tasks each selects (the list's
rules), one signed `task.matched` per task and agent, also when two workers match the same task at once."""

from __future__ import annotations

import threading
from datetime import timedelta
from decimal import Decimal

import pytest
from django.db import connections
from django.utils import timezone

from tasks_market.models import MatchStatus, SavedSearch, SearchMatch, SearchMatchAttempt, Task, TaskStatus
from tasks_market.models.searches import MAX_SEARCHES_PER_AGENT
from tasks_market.services.posting import task_create
from tasks_market.services.saved_searches import SCHEDULE, search_match_attempt, search_matches_find
from tests.tasks_market.factories import AgentFactory

pytestmark = pytest.mark.django_db

SEARCHES = "/api/v1/agents/{}/searches"


def _post_task(poster, **fields):
    values = {
        "title": "Competitor research report",
        "description": "Analyse five competitors' pricing pages.",
        "budget_amount": Decimal("150.00"),
        "budget_currency": "eur",
        "deadline": timezone.now() + timedelta(days=10),
        "category": "research",
        "requirements": ["sources cited"],
    }
    return task_create(poster=poster, **{**values, **fields})


@pytest.fixture
def agent(bob, agent_server):
    made = AgentFactory(owner=bob, endpoint_url=agent_server.url)
    agent_server.secret = made.signing_secret
    return made


def test_an_owner_saves_lists_reads_and_deletes_a_search(bob_api, alice_api, agent):
    body = {"category": ["research", "data"], "currency": "eur", "min_budget": "100.00", "q": "pricing"}

    created = bob_api.post(SEARCHES.format(agent.pk), body, format="json")
    search_id = created.json()["id"]
    listed = bob_api.get(SEARCHES.format(agent.pk)).json()
    one = bob_api.get(created["Location"])
    theirs = alice_api.get(SEARCHES.format(agent.pk))

    assert created.status_code == 201, created.content
    assert {k: v for k, v in created.json().items() if k not in ("id", "created_at")} == {
        "agent_id": str(agent.pk),
        "category": ["data", "research"],
        "currency": "eur",
        "min_budget": "100.00",
        "max_budget": None,
        "deadline_after": None,
        "deadline_before": None,
        "q": "pricing",
    }
    assert [item["id"] for item in listed["items"]] == [search_id] and listed["total"] == 1
    assert one.status_code == 200 and one.json()["id"] == search_id
    assert theirs.status_code == 404
    assert alice_api.delete(f"{SEARCHES.format(agent.pk)}/{search_id}").status_code == 404
    assert bob_api.delete(f"{SEARCHES.format(agent.pk)}/{search_id}").status_code == 204
    assert not SavedSearch.objects.exists()


@pytest.mark.parametrize(
    ("body", "field"),
    [
        ({"category": ["sales"]}, "category"),
        ({"category": "research"}, "category"),
        ({"currency": "xyz"}, "currency"),
        ({"min_budget": "abc"}, "min_budget"),
        ({"min_budget": "100.00", "max_budget": "50.00"}, "max_budget"),
        ({"deadline_after": "tomorrow"}, "deadline_after"),
        ({"deadline_after": "2030-01-10T00:00:00Z", "deadline_before": "2030-01-05T00:00:00Z"}, "deadline_before"),
        ({"q": "a" * 201}, "q"),
    ],
)
def test_a_bad_search_is_a_422_that_names_it(bob_api, agent, body, field):
    response = bob_api.post(SEARCHES.format(agent.pk), body, format="json")

    assert response.status_code == 422, response.content
    assert ["body", field] in [entry["loc"][:2] for entry in response.json()["detail"]]
    assert not SavedSearch.objects.exists()


def test_an_agent_keeps_a_bounded_number_of_searches(bob_api, agent):
    SavedSearch.objects.bulk_create([SavedSearch(agent=agent) for _ in range(MAX_SEARCHES_PER_AGENT)])

    response = bob_api.post(SEARCHES.format(agent.pk), {"currency": "usd"}, format="json")

    assert response.status_code == 409 and SavedSearch.objects.count() == MAX_SEARCHES_PER_AGENT


@pytest.mark.parametrize(
    ("search", "matched"),
    [
        ({}, True),
        ({"categories": ["research", "data"]}, True),
        ({"categories": ["design"]}, False),
        ({"currency": "eur"}, True),
        ({"currency": "usd"}, False),
        ({"min_budget": Decimal("150.00")}, True),  # inclusive
        ({"min_budget": Decimal("150.01")}, False),
        ({"max_budget": Decimal("150.00")}, True),
        ({"max_budget": Decimal("149.99")}, False),
        ({"deadline_before": "day 10"}, True),
        ({"deadline_after": "day 11"}, False),
        ({"q": "competitor pricing"}, True),  # stemmed: competitors
        ({"q": "pricing survey"}, False),  # every word must match
    ],
)
def test_a_search_selects_a_task_by_the_lists_rules(alice, agent, django_capture_on_commit_callbacks, search, matched):
    deadline = timezone.now().replace(microsecond=0) + timedelta(days=10)
    search = dict(search)
    for name in ("deadline_before", "deadline_after"):
        if name in search:
            search[name] = deadline + timedelta(days=int(search[name].split()[1]) - 10)
    SavedSearch.objects.create(agent=agent, **search)

    with django_capture_on_commit_callbacks(execute=True):
        posted = _post_task(alice, deadline=deadline)

    assert SearchMatch.objects.filter(task=posted, agent=agent).exists() is matched


def test_a_match_is_announced_once_signed_with_the_task_as_the_list_shows_it(
    alice, alice_api, agent, agent_server, django_capture_on_commit_callbacks
):
    first = SavedSearch.objects.create(agent=agent, categories=["research"])
    SavedSearch.objects.create(agent=agent, currency="eur")  # also matches: still one announcement
    own = AgentFactory(owner=alice, endpoint_url=agent_server.url)
    SavedSearch.objects.create(agent=own)  # the poster's own agent is not told

    with django_capture_on_commit_callbacks(execute=True):
        posted = _post_task(alice)
    search_matches_find(task_id=posted.pk)  # a second run (a redelivered message) sends nothing more

    listed = alice_api.get("/api/v1/tasks?scope=open&category=research").json()["items"][0]
    (request,) = agent_server.requests
    match = SearchMatch.objects.get()
    assert request["verified"] is True
    assert request["headers"]["webhook-id"] == f"match_{match.pk}"
    assert request["json"]["type"] == "task.matched"
    assert request["json"]["data"] == {"search_id": str(first.pk), "task": {**listed, "is_mine": False}}
    assert (match.agent_id, match.status, match.attempt_count) == (agent.pk, MatchStatus.SENT, 1)


def test_a_failed_announcement_is_retried_then_fails(alice, agent, agent_server, django_capture_on_commit_callbacks):
    agent_server.status = 500
    SavedSearch.objects.create(agent=agent)

    with django_capture_on_commit_callbacks(execute=True):
        _post_task(alice)
    match = SearchMatch.objects.get()
    later = timezone.now()
    for _ in range(SCHEDULE.max_attempts):
        later += timedelta(hours=1)
        search_match_attempt(match_id=match.pk, now=later)

    match.refresh_from_db()
    assert match.status == MatchStatus.FAILED
    assert SearchMatchAttempt.objects.filter(delivery=match).count() == SCHEDULE.max_attempts


def test_a_task_that_closed_before_its_announcement_is_skipped(alice, agent, agent_server):
    SavedSearch.objects.create(agent=agent)
    posted = _post_task(alice)  # no commit callbacks run: matched below, by hand
    search_matches_find(task_id=posted.pk)  # in eager mode this attempts at once: the task is open, so sent
    assert SearchMatch.objects.get().status == MatchStatus.SENT
    other = _post_task(alice, title="Second")
    Task.objects.filter(pk=other.pk).update(status=TaskStatus.CANCELLED)

    assert search_matches_find(task_id=other.pk) == 0  # not open: nothing matched
    assert SearchMatch.objects.count() == 1 and len(agent_server.requests) == 1


def test_a_reopened_task_reaches_new_agents_not_the_ones_told(alice, bob, agent, agent_server):
    SavedSearch.objects.create(agent=agent)
    posted = _post_task(alice)
    search_matches_find(task_id=posted.pk)
    newcomer = AgentFactory(owner=bob, endpoint_url=agent_server.url)
    SavedSearch.objects.create(agent=newcomer)

    search_matches_find(task_id=posted.pk)  # what a reopening queues (tasks_market.services.saved_searches)

    assert sorted(SearchMatch.objects.values_list("agent_id", flat=True)) == sorted([agent.pk, newcomer.pk])
    assert len(agent_server.requests) == 2


def test_one_job_announces_a_task_to_every_agent_side_by_side_and_a_failed_one_waits_for_its_retry(
    alice, bob, agent, agent_server, hook_server, monkeypatch
):
    """The first attempts are made by the matching job itself: the calls side by side (each endpoint here
    answers only once all three calls have arrived), no job queued per agent; the agent whose endpoint failed
    gets its retry queued with the schedule's countdown."""
    others = [AgentFactory(owner=bob, endpoint_url=hook_server.url) for _ in range(2)]
    for each in [agent, *others]:
        SavedSearch.objects.create(agent=each)
    agent_server.status, hook_server.status = 200, 503
    queued = []
    monkeypatch.setattr(
        "tasks_market.tasks.announce_match.apply_async", lambda args, countdown: queued.append((args, countdown))
    )
    monkeypatch.setattr("tasks_market.tasks.announce_match.delay", lambda *args: queued.append((args, None)))
    all_arrived = threading.Barrier(3, timeout=10)  # sent one after the other, the first call would time out
    agent_server.on_request = hook_server.on_request = lambda body: all_arrived.wait()
    posted = _post_task(alice)

    assert search_matches_find(task_id=posted.pk) == 3

    matches = {match.agent_id: match for match in SearchMatch.objects.filter(task=posted)}
    assert matches[agent.pk].status == MatchStatus.SENT
    failed = [matches[each.pk] for each in others]
    assert [(m.status, m.attempt_count, m.claimed_at) for m in failed] == [(MatchStatus.PENDING, 1, None)] * 2
    assert all(m.next_attempt_at > timezone.now() + timedelta(seconds=8) for m in failed)  # 10 s, ±10 %
    assert sorted(args[0] for args, _ in queued) == sorted(str(m.pk) for m in failed)
    assert all(9 <= countdown <= 11 for _, countdown in queued)
    assert SearchMatchAttempt.objects.filter(delivery__task=posted).count() == 3
    assert set(SearchMatchAttempt.objects.filter(delivery__task=posted).values_list("status_code", flat=True)) == {
        200,
        503,
    }


@pytest.mark.django_db(transaction=True)
def test_two_workers_matching_one_task_at_once_announce_it_once(alice, agent, agent_server):
    SavedSearch.objects.create(agent=agent)
    posted = _post_task(alice)
    start, errors = threading.Barrier(4), []

    def work():
        try:
            start.wait()
            search_matches_find(task_id=posted.pk)
        except Exception as exc:  # pragma: no cover - reported below
            errors.append(repr(exc))
        finally:
            connections.close_all()

    threads = [threading.Thread(target=work) for _ in range(4)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()

    assert errors == []
    assert SearchMatch.objects.count() == 1
    assert len(agent_server.requests) == 1
    assert SearchMatchAttempt.objects.count() == 1
