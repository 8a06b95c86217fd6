from __future__ import annotations

from drf_spectacular.utils import extend_schema
from rest_framework.response import Response

from core.api.pagination import PageQuery, envelope, keyset_page, page, render_page
from core.api.schema import error_response
from core.api.validation import RequestValidationError, error
from core.api.views import ApiView
from core.http.access import Access
from core.http.errors import NotFound
from core.http.idempotency import idempotent
from tasks_market import selectors
from tasks_market.api.serializers import (
    ArtefactSerializer,
    BidInput,
    BidJudgementSerializer,
    BidSelectInput,
    BidSerializer,
    SelectionSerializer,
)
from tasks_market.api.serializers.reputation import BidListQuery
from tasks_market.api.views.common import PROVIDER_ERRORS, body_rules
from tasks_market.models import BidJudgement
from tasks_market.services import bids as services

TAGS = ["bids"]
CURSOR_REFUSED = "Value error, a list sorted by reputation pages by offset, not by cursor"


def _bid(request, task_id, bid_id):
    bid = selectors.bid_for(request.user, task_id, bid_id)
    if bid is None:
        raise NotFound()
    return bid


class BidListView(ApiView):
    access = Access.USER_OR_KEY

    @extend_schema(
        operation_id="bids_list",
        summary="A task's bids, newest first",
        description=(
            "The poster sees every bid; a bidder only their own. Each bid carries its agent's record "
            "(`agent_reputation`, docs/decisions.md#agent-reputation). `sort`: `reputation` (best rating score "
            "first, then most completed tasks), `amount` (cheapest first) or `eta` (fastest first); any other "
            "value is 422. Sorted by `reputation`, the list pages by `offset` only (`next_cursor` is null and a "
            "`cursor` is 422)."
        ),
        tags=TAGS,
        parameters=[PageQuery, BidListQuery],
        responses=envelope(BidSerializer),
    )
    def get(self, request, task_id):
        params = self.query(PageQuery, BidListQuery)
        sort = params.pop("sort", None)
        task = selectors.task_for(request.user, task_id)
        if task is None:
            raise NotFound()
        bids = selectors.bids_for(request.user, task, sort)
        total = selectors.bids_total(request.user, task)  # kept for the poster (docs/decisions.md#lists)
        if sort == "reputation":  # an order on the joined row: no keyset cursor
            if params.get("cursor"):
                raise RequestValidationError(
                    [error("value_error", ["query", "cursor"], CURSOR_REFUSED, params["cursor"])]
                )
            rows, total, has_more = page(bids, limit=params["limit"], offset=params["offset"], total=total)
            return Response(render_page(BidSerializer, rows, total, has_more))
        rows, total, has_more, next_cursor = keyset_page(bids, **params, total=total)
        return Response(render_page(BidSerializer, rows, total, has_more, next_cursor=next_cursor))

    @extend_schema(
        operation_id="bids_create",
        summary="Bid on an open task with one of your agents",
        description=(
            "One live (pending or selected) bid per agent and task: another is 409 `bid_exists`. Bidding on "
            "your own task is 409 `own_task`; on a task that is not open, 409 `invalid_state`. `agent_id` must "
            "be one of your agents and `currency` the task's budget currency (else 422). The bid is judged in "
            "the background: see `GET .../bids/{bid_id}/judge`."
        ),
        tags=TAGS,
        request=BidInput,
        responses={201: BidSerializer, 409: error_response("`bid_exists`, `own_task` or `invalid_state`.")},
    )
    @idempotent
    def post(self, request, task_id):
        data = self.body(BidInput)
        with body_rules(request):
            bid = services.bid_create(user=request.user, task_id=task_id, **data)
        # A bid has no URL of its own: Location is the list that shows it (docs/decisions.md#creates).
        return self.created(BidSerializer(bid).data, "task-bids", task_id=task_id)


class BidSelectView(ApiView):
    access = Access.USER_OR_KEY

    @extend_schema(
        operation_id="bids_select",
        summary="Select the winning bid",
        description=(
            "The poster selects a pending bid of an open task. The task becomes `awaiting_payment`, the bid "
            "`selected`, and a payment for the bid's amount is created at the payment provider (metadata "
            "`task_id`, `bid_id`); pay it with `client_secret` or at `checkout_url` (a hosted page; the optional "
            "body's `success_url` / `cancel_url` are where that page links back to). When it succeeds the task "
            "is dispatched to the agent; when it fails the task is open again. Of concurrent selects on one "
            "task exactly one wins; the others are 409. Selecting the selected bid again returns the same "
            "payment, also while its creation is still under way (the provider is asked under the same "
            "idempotency key). When the provider fails (502/503) the task is open again and the bid pending. "
            "409 `invalid_state` when the task is not open or the bid not pending."
        ),
        tags=TAGS,
        request=BidSelectInput,
        responses={
            200: SelectionSerializer,
            409: error_response("The task is not open or the bid not pending (`invalid_state`)."),
            **PROVIDER_ERRORS,
        },
    )
    @idempotent
    def post(self, request, task_id, bid_id):
        data = self.body(BidSelectInput)
        selection = services.bid_select(user=request.user, task_id=task_id, bid_id=bid_id, **data)
        return Response(SelectionSerializer(selection, context={"request": request}).data)


class BidWithdrawView(ApiView):
    access = Access.USER_OR_KEY

    @extend_schema(
        operation_id="bids_withdraw",
        summary="Withdraw your pending bid, or give up a paid task",
        description=(
            "The bidder takes back a pending bid; it becomes `withdrawn` and can no longer be selected. The "
            "selected bid of a paid task (`delivering`, or `in_review` while nobody acted on the submission) can "
            "be withdrawn too: the seller gives the task up, the poster is refunded in full and the task is "
            "`cancelled` (docs/decisions.md#cancelling-a-paid-task)."
        ),
        tags=TAGS,
        request=None,
        responses={
            200: BidSerializer,
            409: error_response("The bid is neither pending nor the selected bid of a paid task (`invalid_state`)."),
        },
    )
    @idempotent
    def post(self, request, task_id, bid_id):
        bid = services.bid_withdraw(user=request.user, task_id=task_id, bid_id=bid_id)
        return Response(BidSerializer(bid).data)


class BidArtefactsView(ApiView):
    access = Access.USER_OR_KEY

    @extend_schema(
        operation_id="bids_artefacts",
        summary="A bid's sample artefacts",
        description="For the task's poster and the bidder.",
        tags=TAGS,
        parameters=[PageQuery],
        responses=envelope(ArtefactSerializer),
    )
    def get(self, request, task_id, bid_id):
        params = self.query(PageQuery)
        rows, total, has_more, next_cursor = keyset_page(
            selectors.bid_artefacts(_bid(request, task_id, bid_id)), **params
        )
        return Response(render_page(ArtefactSerializer, rows, total, has_more, next_cursor=next_cursor))


class BidJudgeView(ApiView):
    access = Access.USER_OR_KEY

    @extend_schema(
        operation_id="bids_judge",
        summary="The judge's evaluation of a bid",
        description=(
            "Computed in the background when the bid is made (`status` `pending` until then), from fixed "
            "criteria, each scored 0..1: `price` (weight 0.35; amount/budget r: 1.5 - r, clamped), "
            "`benchmark` (0.25; the agent's last benchmark score / 100, 0 if never benchmarked), `eta` "
            "(0.20; q = eta_hours / hours left before the deadline: 2 - 2q, clamped), `relevance` (0.20; "
            "c = share of the task's terms the proposal uses: min(1, 2c)). `score` = 100 * the weighted sum."
        ),
        tags=TAGS,
        responses=BidJudgementSerializer,
    )
    def get(self, request, task_id, bid_id):
        bid = _bid(request, task_id, bid_id)
        judgement = selectors.judgement_of(bid) or BidJudgement(bid=bid)
        return Response(BidJudgementSerializer(judgement).data)
