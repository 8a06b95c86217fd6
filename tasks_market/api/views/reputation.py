"""Agent reputation and reviews (docs/decisions.md#agent-reputation, docs/decisions.md#reviews)."""

from __future__ import annotations

from drf_spectacular.utils import extend_schema
from rest_framework.response import Response

from core.api.pagination import PageQuery, envelope, keyset_page, render_page
from core.api.schema import error_response
from core.api.views import ApiView
from core.http.access import Access
from core.http.errors import NotFound
from core.http.idempotency import idempotent
from tasks_market import selectors
from tasks_market.api.serializers.reputation import (
    AgentReputationSerializer,
    ReplyInput,
    ReviewEditInput,
    ReviewInput,
    ReviewSerializer,
    reputation_body,
)
from tasks_market.services import reputation as services

TAGS = ["reputation"]


class AgentReputationView(ApiView):
    access = Access.USER_OR_KEY

    @extend_schema(
        operation_id="agents_reputation",
        summary="An agent's record from verified outcomes",
        description=(
            "For everyone signed in; nothing else of the owner's is shown. Only paid tasks whose money was "
            "released, or whose dispute staff resolved, count; a task whose poster owns the agent and one "
            "refunded in full after release do not (`not_counted` says how many). `approved_without_revision` "
            "and `on_time` (the last submission before the task's deadline) are over `completed_tasks`; "
            "`disputes` by outcome; `rating.score` = (C·m + Σ w·rating) / (C + Σ w), w = log10(10 + the task's "
            "amount), with its inputs (docs/decisions.md#agent-reputation)."
        ),
        tags=TAGS,
        responses=AgentReputationSerializer,
    )
    def get(self, request, agent_id):
        return Response(reputation_body(services.reputation_of(agent_id)))


class AgentReviewsView(ApiView):
    access = Access.USER_OR_KEY

    @extend_schema(
        operation_id="agents_reviews_list",
        summary="An agent's reviews, newest first",
        description="For everyone signed in. A comment staff hid is null (`comment_hidden`); its rating still counts.",
        tags=TAGS,
        parameters=[PageQuery],
        responses=envelope(ReviewSerializer),
    )
    def get(self, request, agent_id):
        params = self.query(PageQuery)
        reviews = selectors.agent_reviews(agent_id)
        if reviews is None:
            raise NotFound()
        rows, total, has_more, next_cursor = keyset_page(reviews, **params)
        return Response(render_page(ReviewSerializer, rows, total, has_more, next_cursor=next_cursor))


class TaskReviewView(ApiView):
    access = Access.USER_OR_KEY

    @extend_schema(
        operation_id="task_review_get",
        summary="A task's review",
        description="For the task's poster and the reviewed agent's owner; 404 before there is one.",
        tags=TAGS,
        responses=ReviewSerializer,
    )
    def get(self, request, task_id):
        review = selectors.review_for(request.user, task_id)
        if review is None:
            raise NotFound()
        return Response(ReviewSerializer(review).data)

    @extend_schema(
        operation_id="task_review_create",
        summary="Rate the agent of a completed task (the poster, once)",
        description=(
            "`rating` 1..5 and an optional `comment`, once per task: a second is 409 `review_exists`. Only the "
            "poster of a completed task that counts toward the agent's reputation (paid and released, or "
            "resolved by staff with money released; not one whose poster owns the agent, nor one refunded in "
            "full): else 409 `invalid_state`; the agent's owner gets 403, anyone else 404. Editable with PATCH "
            "for 14 days (docs/decisions.md#reviews). Announced as `review.created`."
        ),
        tags=TAGS,
        request=ReviewInput,
        responses={
            201: ReviewSerializer,
            409: error_response("Already reviewed (`review_exists`) or not reviewable (`invalid_state`)."),
        },
    )
    @idempotent
    def post(self, request, task_id):
        data = self.body(ReviewInput)
        review = services.review_create(user=request.user, task_id=task_id, **data)
        return self.created(ReviewSerializer(review).data, "task-review", task_id=task_id)

    @extend_schema(
        operation_id="task_review_edit",
        summary="Edit your review (the poster, within 14 days)",
        description=(
            "Changes `rating` and/or `comment` until `editable_until` (14 days after the review); after that "
            "409 `review_locked`. The agent's score follows the new rating at once."
        ),
        tags=TAGS,
        request=ReviewEditInput,
        responses={200: ReviewSerializer, 409: error_response("The edit window is over (`review_locked`).")},
    )
    def patch(self, request, task_id):
        data = self.body(ReviewEditInput)
        review = services.review_edit(user=request.user, task_id=task_id, **data)
        return Response(ReviewSerializer(review).data)


class TaskReviewReplyView(ApiView):
    access = Access.USER_OR_KEY

    @extend_schema(
        operation_id="task_review_reply",
        summary="Answer a review (the agent's owner, once)",
        description=(
            "The reviewed agent's owner answers once; a second is 409 `reply_exists`. The poster gets 403, "
            "anyone else 404."
        ),
        tags=TAGS,
        request=ReplyInput,
        responses={200: ReviewSerializer, 409: error_response("Already answered (`reply_exists`).")},
    )
    @idempotent
    def post(self, request, task_id):
        data = self.body(ReplyInput)
        review = services.review_reply(user=request.user, task_id=task_id, **data)
        return Response(ReviewSerializer(review).data)
