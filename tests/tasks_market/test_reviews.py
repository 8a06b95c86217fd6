"""Reviews (docs/decisions.md#reviews): once per completed, counted task, by its poster; editable for 14
days; the agent's owner answers once; staff hide a comment and the rating stays."""

from __future__ import annotations

from datetime import timedelta

import pytest
from django.utils import timezone

from tasks_market.models import AgentReputation, Review
from tasks_market.services.reputation import review_set_hidden
from tests.conftest import client_with_token, jwt_for
from tests.support.factories import UserFactory
from tests.tasks_market.factories import AgentFactory, delivering_task
from tests.tasks_market.outcomes import finished
from tests.webhooks_app.factories import WebhookSubscriptionFactory
from webhooks_app.models import WebhookEvent

pytestmark = pytest.mark.django_db


@pytest.fixture
def parties():
    poster, owner, stranger = UserFactory(), UserFactory(), UserFactory()
    agent = AgentFactory(owner=owner)
    task = finished(poster, agent, amount="90.00")
    return {
        "task": task,
        "agent": agent,
        "poster": client_with_token(jwt_for(poster)),
        "owner": client_with_token(jwt_for(owner)),
        "stranger": client_with_token(jwt_for(stranger)),
        "owner_user": owner,
    }


def review_url(task) -> str:
    return f"/api/v1/tasks/{task.id}/review"


def score_of(agent) -> tuple:
    row = AgentReputation.objects.get(pk=agent.pk)
    return float(row.score), row.rating_count


@pytest.mark.parametrize(
    ("who", "body", "status", "code"),
    [
        ("owner", {"rating": 5}, 403, "permission_denied"),
        ("stranger", {"rating": 5}, 404, "not_found"),
        ("poster", {"rating": 0}, 422, None),
        ("poster", {"rating": 6}, 422, None),
        ("poster", {}, 422, None),
    ],
)
def test_who_may_review_and_with_what(parties, who, body, status, code):
    response = parties[who].post(review_url(parties["task"]), body, format="json")

    assert response.status_code == status, response.content
    if code:
        assert response.json()["code"] == code
    assert not Review.objects.exists()


def test_the_poster_reviews_once_and_the_owner_is_told(parties):
    WebhookSubscriptionFactory(owner=parties["owner_user"], events=["review.created"])
    first = parties["poster"].post(review_url(parties["task"]), {"rating": 4, "comment": "Solid."}, format="json")
    second = parties["poster"].post(review_url(parties["task"]), {"rating": 1}, format="json")

    assert first.status_code == 201, first.content
    assert first["Location"].endswith(review_url(parties["task"]))
    assert (first.json()["rating"], first.json()["comment"], first.json()["reply"]) == (4, "Solid.", None)
    assert (second.status_code, second.json()["code"]) == (409, "review_exists")
    # (5·3.5 + 2·4) / (5 + 2)
    assert score_of(parties["agent"]) == (3.6429, 1)
    event = WebhookEvent.objects.get(owner=parties["owner_user"], type="review.created")
    assert '"rating":4' in event.body
    assert parties["owner"].get(review_url(parties["task"])).json()["rating"] == 4
    assert parties["stranger"].get(review_url(parties["task"])).status_code == 404


@pytest.mark.parametrize(
    ("kind", "code"),
    [("open", "invalid_state"), ("refund_full", "invalid_state"), ("self_dealt", "invalid_state")],
)
def test_only_a_completed_counted_task_is_reviewable(kind, code):
    poster = UserFactory()
    if kind == "open":
        task, _ = delivering_task(poster=poster)
    elif kind == "refund_full":
        task = finished(poster, AgentFactory(), amount="90.00", end="refund_full")
    else:
        task = finished(poster, AgentFactory(owner=poster), amount="90.00")

    response = client_with_token(jwt_for(poster)).post(review_url(task), {"rating": 5}, format="json")

    assert (response.status_code, response.json()["code"]) == (409, code)


@pytest.mark.parametrize(
    ("who", "days_later", "status", "code", "score"),
    [
        ("poster", 13, 200, None, (3.0714, 1)),  # (17.5 + 2·2) / 7: the score follows the edit
        ("poster", 15, 409, "review_locked", (3.6429, 1)),
        ("owner", 1, 403, "permission_denied", (3.6429, 1)),
        ("stranger", 1, 404, "not_found", (3.6429, 1)),
    ],
)
def test_editing_within_14_days(parties, who, days_later, status, code, score):
    parties["poster"].post(review_url(parties["task"]), {"rating": 4}, format="json")
    Review.objects.update(editable_until=timezone.now() + timedelta(days=14 - days_later))

    response = parties[who].patch(review_url(parties["task"]), {"rating": 2, "comment": "Second look."}, format="json")

    assert response.status_code == status, response.content
    if code:
        assert response.json()["code"] == code
    else:
        assert (response.json()["rating"], response.json()["comment"]) == (2, "Second look.")
    assert score_of(parties["agent"]) == score


@pytest.mark.parametrize(
    ("who", "status", "code"),
    [("owner", 200, None), ("poster", 403, "permission_denied"), ("stranger", 404, "not_found")],
)
def test_the_agents_owner_replies_once(parties, who, status, code):
    url = review_url(parties["task"]) + "/reply"
    assert parties["owner"].post(url, {"reply": "Early."}, format="json").status_code == 404  # no review yet
    parties["poster"].post(review_url(parties["task"]), {"rating": 3}, format="json")

    response = parties[who].post(url, {"reply": "Thank you."}, format="json")

    assert response.status_code == status, response.content
    if code:
        assert response.json()["code"] == code
        return
    assert response.json()["reply"] == "Thank you."
    again = parties["owner"].post(url, {"reply": "And again."}, format="json")
    assert (again.status_code, again.json()["code"]) == (409, "reply_exists")
    assert Review.objects.get().reply == "Thank you."


def test_reviews_are_public_and_a_hidden_comment_keeps_its_rating(parties, api):
    parties["poster"].post(review_url(parties["task"]), {"rating": 5, "comment": "Rude words."}, format="json")
    review_set_hidden(review_id=Review.objects.get().pk, hidden=True)

    body = parties["stranger"].get(f"/api/v1/agents/{parties['agent'].id}/reviews").json()

    assert [(r["rating"], r["comment"], r["comment_hidden"]) for r in body["items"]] == [(5, None, True)]
    assert score_of(parties["agent"]) == (3.9286, 1)
    assert parties["stranger"].get(f"/api/v1/agents/{parties['agent'].id}/reputation").status_code == 200
    for path in ("reputation", "reviews"):  # signed-in users only
        assert api.get(f"/api/v1/agents/{parties['agent'].id}/{path}").status_code == 401


def test_staff_hide_a_comment_from_the_admin(parties, admin_client):
    parties["poster"].post(review_url(parties["task"]), {"rating": 5, "comment": "Rude words."}, format="json")
    review = Review.objects.get()

    listed = admin_client.get("/admin/tasks_market/review/?comment_hidden__exact=0&rating=5&q=", secure=True)
    hidden = admin_client.post(
        "/admin/tasks_market/review/", {"action": "hide_comment", "_selected_action": [str(review.pk)]}, secure=True
    )

    assert listed.status_code == 200 and str(review.task) in listed.content.decode()
    assert hidden.status_code == 302
    review.refresh_from_db()
    assert review.comment_hidden and review.comment == "Rude words."
    assert score_of(parties["agent"]) == (3.9286, 1)
