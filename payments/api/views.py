"""The sellers' payout API (docs/payouts.md#the-sellers-api): the owner's payout account, balance,
earnings, payouts (and what each contained) and statement. JWT only: money is not for API keys."""

from __future__ import annotations

from drf_spectacular.utils import extend_schema
from rest_framework.response import Response

from core.api.pagination import PageQuery, envelope, keyset_page, render_page
from core.api.schema import error_response
from core.api.views import ApiView
from core.http.access import Access
from core.http.errors import NotFound
from core.http.idempotency import idempotent
from payments.api import statement
from payments.api.serializers import (
    BalanceMovementSerializer,
    BalancesSerializer,
    EarningSerializer,
    OnboardingSerializer,
    PayoutAccountSerializer,
    PayoutAccountStartInput,
    PayoutDetailSerializer,
    PayoutSerializer,
    StatementQuery,
)
from payments.ledger import seller_balances
from payments.models import Payout
from payments.services.accounts import payout_account_for, payout_account_start

TAGS = ["payouts"]
PROVIDER_ERRORS = {
    502: error_response("The payment provider refused the call; nothing was changed."),
    503: error_response("The payment provider is unavailable; nothing was changed."),
}


class PayoutAccountView(ApiView):
    access = Access.USER

    @extend_schema(
        operation_id="payout_account_get",
        summary="Your payout account",
        description="Its status (`onboarding`, `active`, `restricted`) and whether payouts are enabled. "
        "404 `not_found` before onboarding was started.",
        tags=TAGS,
        responses={200: PayoutAccountSerializer, 404: error_response("No payout account yet (`not_found`).")},
    )
    def get(self, request):
        return Response(PayoutAccountSerializer(payout_account_for(owner=request.user)).data)

    @extend_schema(
        operation_id="payout_account_start",
        summary="Start (or continue) onboarding your payout account",
        description=(
            "Creates the account at the payment provider once and answers a fresh `onboarding_url`: Stripe's "
            "hosted Connect onboarding, or this server's page with the local provider. Earnings accrue before "
            "the account is active; payouts start once it is. Needs a verified e-mail address (`GET /auth/me` "
            "`email_verified`), else 403 `email_unverified`. `country` (ISO 3166-1 alpha-2) is where the account "
            "and its bank are; another value is a 422."
        ),
        tags=TAGS,
        request=PayoutAccountStartInput,
        responses={
            200: OnboardingSerializer,
            403: error_response(
                "An API key (`api_key_not_allowed`), or the e-mail address is not verified yet (`email_unverified`)."
            ),
            **PROVIDER_ERRORS,
        },
    )
    @idempotent
    def post(self, request):
        data = self.body(PayoutAccountStartInput)
        started = payout_account_start(owner=request.user, **data)
        return Response(
            OnboardingSerializer({"account": started.account, "onboarding_url": started.onboarding_url}).data
        )


class BalanceView(ApiView):
    access = Access.USER

    @extend_schema(
        operation_id="payout_balance",
        summary="Your balance per currency",
        description="`pending` (released, the payment not settled yet), `available` (paid out on the next "
        "scheduled payout), `paid_out`, and `frozen` (held by an open card chargeback).",
        tags=TAGS,
        responses=BalancesSerializer,
    )
    def get(self, request):
        items = [
            {"currency": currency, **states} for currency, states in sorted(seller_balances(request.user.pk).items())
        ]
        return Response(BalancesSerializer({"items": items}).data)


class EarningListView(ApiView):
    access = Access.USER

    @extend_schema(
        operation_id="payout_earnings",
        summary="Your earnings, newest first",
        description="One row per released task: the `gross`, the platform's `fee`, your `net` (`amount`, "
        "deprecated, says the same), its status, when its hold ends (`available_at`) and why it is held "
        "(`hold_reason`).",
        tags=TAGS,
        parameters=[PageQuery],
        responses=envelope(EarningSerializer),
    )
    def get(self, request):
        params = self.query(PageQuery)
        rows, total, has_more, next_cursor = keyset_page(
            statement.earnings_of(request.user), **params, total=statement.earnings_total(request.user)
        )
        return Response(render_page(EarningSerializer, rows, total, has_more, next_cursor=next_cursor))


class PayoutListView(ApiView):
    access = Access.USER

    @extend_schema(
        operation_id="payouts_list",
        summary="Your payouts, newest first",
        description="Each payout of available money to your account, with its status (`pending`, `paid`, "
        "`failed`, `canceled`) and the transfer that moved it (`transfer_id`). What each one paid: "
        "`GET /api/v1/payouts/{payout_id}`.",
        tags=TAGS,
        parameters=[PageQuery],
        responses=envelope(PayoutSerializer),
    )
    def get(self, request):
        params = self.query(PageQuery)
        rows, total, has_more, next_cursor = keyset_page(
            statement.payouts_of(request.user), **params, total=statement.payouts_total(request.user)
        )
        return Response(render_page(PayoutSerializer, rows, total, has_more, next_cursor=next_cursor))


class PayoutDetailView(ApiView):
    access = Access.USER

    @extend_schema(
        operation_id="payout_get",
        summary="One of your payouts, with what it paid",
        description="The payout, the `earnings` it paid (their net) and the `debts` it netted since the payout "
        "before it (chargebacks, refunds of money already paid out; negative: given back), so "
        "`amount` = the earnings' net - the debts. Another owner's payout is 404 `not_found`.",
        tags=TAGS,
        responses={200: PayoutDetailSerializer, 404: error_response("No such payout of yours (`not_found`).")},
    )
    def get(self, request, payout_id):
        payout = Payout.objects.filter(owner=request.user, pk=payout_id).first()
        if payout is None:
            raise NotFound()
        context = {"earnings": statement.payout_earnings(payout), "debts": statement.payout_debts(payout)}
        return Response(PayoutDetailSerializer(payout, context=context).data)


class ActivityView(ApiView):
    access = Access.USER

    @extend_schema(
        operation_id="payout_activity",
        summary="Your statement: every movement of your money, newest first",
        description="Each ledger movement of your balances (`state`: `pending`, `available`, `paid_out`, "
        "`frozen`, `chargebacks`, `recovered`) with its `kind`, its `reason` in words, its `source` "
        "(`task:<uuid>`, `payout:<uuid>`), the signed `amount` and that state's balance in that currency after "
        "it (`balance_after`). A movement between two states is two rows (e.g. `available`: `pending` -x and "
        "`available` +x). `currency` filters by currency.",
        tags=TAGS,
        parameters=[StatementQuery],
        responses=envelope(BalanceMovementSerializer),
    )
    def get(self, request):
        params = self.query(StatementQuery)  # cached per query string: read, never changed
        lines = statement.statement_lines(request.user.pk, currency=params.get("currency"))
        rows, total, has_more, next_cursor = keyset_page(
            lines, limit=params["limit"], offset=params["offset"], cursor=params.get("cursor")
        )
        items = statement.movements(request.user.pk, rows)
        return Response(render_page(BalanceMovementSerializer, items, total, has_more, next_cursor=next_cursor))
