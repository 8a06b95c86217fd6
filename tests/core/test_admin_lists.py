"""Staff change lists: the agents' and assistants' filters, and a prefix search whose help says what the
database really does (PostgreSQL's LIKE compares case, SQLite's ignores it for A-Z)."""

from __future__ import annotations

import sqlite3
from datetime import timedelta
from urllib.parse import quote

import pytest
from django.utils import timezone

from assistant.models import Assistant
from tasks_market.admin import _starts_with_help
from tasks_market.models import Agent
from tests.assistant.factories import AssistantFactory
from tests.support.factories import UserFactory
from tests.tasks_market.factories import AgentFactory, TaskFactory

pytestmark = pytest.mark.django_db


def _listed(admin_client, url: str) -> list:
    response = admin_client.get(url, secure=True)
    assert response.status_code == 200, url
    return list(response.context["cl"].result_list)


def test_the_agent_list_filters_by_benchmark_and_by_date(admin_client):
    benchmarked = AgentFactory(benchmark_score=0.9, benchmarked_at=timezone.now())
    fresh = AgentFactory()
    old = AgentFactory()
    Agent.objects.filter(pk=old.pk).update(created_at=timezone.now() - timedelta(days=60))

    assert _listed(admin_client, "/admin/tasks_market/agent/?benchmark_score__isempty=0") == [benchmarked]
    assert set(_listed(admin_client, "/admin/tasks_market/agent/?benchmark_score__isempty=1")) == {fresh, old}
    since = quote((timezone.now() - timedelta(days=7)).isoformat())
    assert set(_listed(admin_client, f"/admin/tasks_market/agent/?created_at__gte={since}")) == {benchmarked, fresh}

    html = admin_client.get("/admin/tasks_market/agent/", secure=True).content.decode()
    assert "By benchmark score" in html and "By created at" in html


def test_the_assistant_list_filters_by_date_and_by_the_users_active_flag(admin_client):
    active = AssistantFactory()
    gone = AssistantFactory(user=UserFactory(is_active=False))
    Assistant.objects.filter(pk=gone.pk).update(created_at=timezone.now() - timedelta(days=60))

    assert _listed(admin_client, "/admin/assistant/assistant/?user__is_active__exact=0") == [gone]
    assert _listed(admin_client, "/admin/assistant/assistant/?user__is_active__exact=1") == [active]
    since = quote((timezone.now() - timedelta(days=7)).isoformat())
    assert _listed(admin_client, f"/admin/assistant/assistant/?created_at__gte={since}") == [active]
    assert _listed(admin_client, "/admin/assistant/assistant/?q=" + gone.user.email) == [gone]


def test_the_title_search_is_case_sensitive_on_postgresql_and_its_help_says_so(admin_client):
    task = TaskFactory(title="Alpha launch copy")

    response = admin_client.get("/admin/tasks_market/task/?q=Alpha", secure=True)
    assert list(response.context["cl"].result_list) == [task]
    assert "Tasks whose title starts with the text (case-sensitive)." in response.content.decode()
    assert _listed(admin_client, "/admin/tasks_market/task/?q=alpha") == []
    assert "(case-sensitive)" in admin_client.get("/admin/tasks_market/delivery/", secure=True).content.decode()


def test_on_sqlite_the_help_says_that_the_case_of_a_to_z_is_ignored():
    assert (
        _starts_with_help("Tasks whose title", "sqlite")
        == "Tasks whose title starts with the text (ignoring the case of A-Z)."
    )
    # What Django's SQLite backend sends for `__startswith`, and what SQLite answers (the local profile).
    with sqlite3.connect(":memory:") as conn:
        like = "SELECT ? LIKE ? ESCAPE '\\'"
        assert conn.execute(like, ("Alpha launch copy", "alpha%")).fetchone() == (1,)
        assert conn.execute(like, ("Ärger", "ä%")).fetchone() == (0,)  # outside A-Z the case counts
