"""The Stripe adapter's lookups and balances (docs/payouts.md#reconciliation) against httpx.MockTransport: the
exact requests (path, query, `Stripe-Account`), every page read (`limit=100`, `starting_after` the last id
while `has_more`), and Stripe's objects mapped to ours (a balance transaction's source named as our ledger
names it)."""

from __future__ import annotations

from datetime import UTC, datetime
from decimal import Decimal

import httpx
import pytest

from core.http.errors import ProviderError
from payments.providers.base import BalanceTransaction
from payments.providers.stripe import StripePaymentProvider

ACCOUNT = "acct_1Seller"


class PagedStripe:
    """Serves each list path from its objects, `limit` at a time after `starting_after`; records requests."""

    def __init__(self, lists: dict[str, list[dict]], *, balance: dict | None = None, page: int = 2):
        self.lists, self.balance, self.page = lists, balance or {}, page
        self.requests: list[httpx.Request] = []

    def __call__(self, request: httpx.Request) -> httpx.Response:
        self.requests.append(request)
        if request.url.path == "/v1/balance":
            return httpx.Response(200, json={"object": "balance", **self.balance})
        items = self.lists[request.url.path]
        after = request.url.params.get("starting_after")
        start = next(i for i, item in enumerate(items) if item["id"] == after) + 1 if after else 0
        chunk = items[start : start + self.page]
        more = start + self.page < len(items)
        return httpx.Response(200, json={"object": "list", "data": chunk, "has_more": more, "url": request.url.path})

    def queries(self) -> list[list[tuple[str, str]]]:
        return [list(r.url.params.multi_items()) for r in self.requests]


def adapter(fake) -> StripePaymentProvider:
    return StripePaymentProvider(api_key="sk_test", base_url="https://stripe.test", transport=httpx.MockTransport(fake))


def _transfer(n: int, **metadata) -> dict:
    return {
        "id": f"tr_{n}",
        "object": "transfer",
        "amount": 13500,
        "amount_reversed": 0,
        "currency": "usd",
        "destination": ACCOUNT,
        "transfer_group": "payout:p1",
        "metadata": metadata,
    }


def test_find_transfer_lists_the_group_page_by_page_and_matches_the_metadata():
    fake = PagedStripe({"/v1/transfers": [_transfer(1), _transfer(2, payout_id="p0"), _transfer(3, payout_id="p1")]})

    found = adapter(fake).find_transfer(transfer_group="payout:p1", metadata_key="payout_id", metadata_value="p1")

    assert (found.id, found.account_id, found.amount, found.metadata) == (
        "tr_3",
        ACCOUNT,
        Decimal("135.00"),
        {"payout_id": "p1"},
    )
    assert [r.url.path for r in fake.requests] == ["/v1/transfers"] * 2
    assert fake.queries() == [
        [("transfer_group", "payout:p1"), ("limit", "100")],
        [("transfer_group", "payout:p1"), ("limit", "100"), ("starting_after", "tr_2")],
    ]
    assert all("Stripe-Account" not in r.headers for r in fake.requests)


def test_find_transfer_answers_none_after_the_last_page():
    fake = PagedStripe({"/v1/transfers": [_transfer(1), _transfer(2), _transfer(3)]})

    assert adapter(fake).find_transfer(transfer_group="g", metadata_key="payout_id", metadata_value="p1") is None
    assert len(fake.requests) == 2  # has_more was false on the second page


def _payout(n: int, payout_id: str, status="paid") -> dict:
    return {"id": f"po_{n}", "object": "payout", "amount": 5000, "currency": "eur", "status": status,
            "metadata": {"payout_id": payout_id}}  # fmt: skip


def test_find_payout_reads_the_connected_accounts_payouts_as_that_account():
    fake = PagedStripe({"/v1/payouts": [_payout(1, "a"), _payout(2, "b"), _payout(3, "c", status="in_transit")]})

    found = adapter(fake).find_payout(account_id=ACCOUNT, payout_id="c")

    assert (found.id, found.account_id, found.status, found.metadata) == (
        "po_3",
        ACCOUNT,
        "pending",
        {"payout_id": "c"},
    )
    assert [r.headers["Stripe-Account"] for r in fake.requests] == [ACCOUNT, ACCOUNT]
    assert fake.queries() == [[("limit", "100")], [("limit", "100"), ("starting_after", "po_2")]]
    assert adapter(PagedStripe({"/v1/payouts": []})).find_payout(account_id=ACCOUNT, payout_id="c") is None


def test_find_refund_lists_the_intents_refunds_and_matches_the_operation():
    refunds = [
        {"id": "re_1", "object": "refund", "amount": 1000, "currency": "usd", "status": "succeeded",
         "payment_intent": "pi_1", "metadata": {}},
        {"id": "re_2", "object": "refund", "amount": 5000, "currency": "usd", "status": "succeeded",
         "payment_intent": "pi_1", "metadata": {"operation": "dispute:d1:refund"}},
    ]  # fmt: skip
    fake = PagedStripe({"/v1/refunds": refunds})

    found = adapter(fake).find_refund(payment_id="pi_1", idempotency_key="dispute:d1:refund")

    assert (found.id, found.payment_id, found.amount, found.status) == ("re_2", "pi_1", Decimal("50.00"), "succeeded")
    assert fake.queries() == [[("payment_intent", "pi_1"), ("limit", "100")]]
    assert adapter(fake).find_refund(payment_id="pi_1", idempotency_key="refund:pi_1") is None


def test_an_id_that_is_not_stripes_never_reaches_a_query():
    fake = PagedStripe({"/v1/refunds": []})
    with pytest.raises(ProviderError):
        adapter(fake).find_refund(payment_id="pi_1&payment_intent=pi_2", idempotency_key="k")
    assert fake.requests == []


def test_the_balance_is_available_plus_pending_per_currency_for_the_platform_or_an_account():
    balance = {
        "available": [{"amount": 10000, "currency": "usd"}, {"amount": 500, "currency": "jpy"}],
        "pending": [{"amount": 2550, "currency": "usd"}],
    }
    fake = PagedStripe({}, balance=balance)

    assert adapter(fake).balance() == {"usd": Decimal("125.50"), "jpy": Decimal("500")}
    assert adapter(fake).balance(account_id=ACCOUNT) == {"usd": Decimal("125.50"), "jpy": Decimal("500")}
    assert [(r.url.path, r.headers.get("Stripe-Account")) for r in fake.requests] == [
        ("/v1/balance", None),
        ("/v1/balance", ACCOUNT),
    ]


CREATED = 1_900_000_000


def _txn(n: int, type_: str, amount: int, source, fee: int = 0) -> dict:
    return {"id": f"txn_{n}", "object": "balance_transaction", "type": type_, "amount": amount, "fee": fee,
            "net": amount - fee, "currency": "usd", "created": CREATED + n, "source": source}  # fmt: skip


def test_balance_transactions_read_every_page_since_a_time_with_sources_named_as_the_ledger_names_them():
    charge = {"id": "ch_1", "object": "charge", "payment_intent": "pi_1", "transfer_group": "task:t1"}
    refund = {"id": "re_1", "object": "refund", "payment_intent": "pi_1", "charge": "ch_1"}
    dispute = {"id": "dp_1", "object": "dispute", "payment_intent": "pi_1", "charge": "ch_1"}
    fake = PagedStripe(
        {
            "/v1/balance_transactions": [
                _txn(1, "charge", 15000, charge, fee=465),
                _txn(2, "refund", -5000, refund),
                _txn(3, "transfer", -9000, {"id": "tr_1", "object": "transfer", "transfer_group": "payout:p1"}),
                _txn(4, "adjustment", -10000, dispute, fee=1500),
                _txn(5, "stripe_fee", -100, None),
            ]
        }
    )

    since = datetime.fromtimestamp(CREATED, tz=UTC)
    found = list(adapter(fake).balance_transactions(created_after=since))

    assert found[0] == BalanceTransaction(
        id="txn_1",
        type="charge",
        amount=Decimal("150.00"),
        fee=Decimal("4.65"),
        net=Decimal("145.35"),
        currency="usd",
        source="pi_1",
        created=datetime.fromtimestamp(CREATED + 1, tz=UTC),
        group="task:t1",
        payment_id="pi_1",
    )
    assert [(t.source, t.group, t.payment_id, t.net) for t in found[1:]] == [
        ("re_1", "", "pi_1", Decimal("-50.00")),
        ("tr_1", "payout:p1", "", Decimal("-90.00")),
        ("dp_1", "", "pi_1", Decimal("-115.00")),
        ("", "", "", Decimal("-1.00")),
    ]
    base = [("expand[]", "data.source"), ("created[gte]", str(CREATED)), ("limit", "100")]
    assert fake.queries() == [base, [*base, ("starting_after", "txn_2")], [*base, ("starting_after", "txn_4")]]


def test_a_connected_accounts_incoming_payment_is_named_by_its_transfer():
    payment = {"id": "py_1", "object": "charge", "source_transfer": "tr_9", "payment_intent": None}
    payout = {"id": "po_1", "object": "payout"}
    fake = PagedStripe(
        {"/v1/balance_transactions": [_txn(1, "payment", 9000, payment), _txn(2, "payout", -9000, payout)]}
    )

    found = list(adapter(fake).balance_transactions(account_id=ACCOUNT))

    assert [(t.type, t.source) for t in found] == [("payment", "tr_9"), ("payout", "po_1")]
    assert fake.requests[0].headers["Stripe-Account"] == ACCOUNT
    assert fake.queries()[0] == [("expand[]", "data.source"), ("limit", "100")]


def test_a_list_stripe_answers_without_data_is_refused():
    def broken(request):
        return httpx.Response(200, json={"object": "list"})

    with pytest.raises(ProviderError, match="list we cannot read"):
        list(adapter(broken).balance_transactions())
