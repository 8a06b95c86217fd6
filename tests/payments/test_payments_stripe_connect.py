"""The Stripe adapter's Connect calls (docs/payouts.md) against the local Stripe stand-in: the exact requests
(form fields, `Idempotency-Key`, `Stripe-Account`), retries with the same key creating nothing new, a key
reused with other parameters refused as Stripe refuses it, and Stripe's failures mapped to ours.

The stand-in (tests/support/stripe_server.py) keeps the objects and the money as Stripe would: a transfer
needs the charge it names, a reversal or a refund cannot exceed what is left, a payout what the
connected account holds.
"""

from __future__ import annotations

import json
import socket
from decimal import Decimal

import pytest

from core.http.errors import ProviderError, ProviderUnavailable
from payments import signing
from payments.providers.base import PaymentStatus, PayoutAccountStatus
from payments.providers.stripe import StripePaymentProvider, payout_account_status
from tests.support.stripe_server import stored_intent, stripe_stand_in

TASK = "7d0c1c4e-3f4a-4a53-9b7e-0d3c1c1f6a10"
BID = "0a1b2c3d-4e5f-4a6b-8c7d-9e0f1a2b3c4d"


@pytest.fixture
def stripe(settings):
    with stripe_stand_in(settings) as state:
        yield state


@pytest.fixture
def adapter(stripe) -> StripePaymentProvider:
    return StripePaymentProvider.from_settings()


def _account(adapter, key="payout-account:u1", email="owner@example.com"):
    return adapter.create_payout_account(email=email, country="us", metadata={"user_id": "u1"}, idempotency_key=key)


def _active_account(adapter, stripe) -> str:
    account = _account(adapter)
    stripe.complete_onboarding(account.id, name="Copybot Ltd")
    return account.id


def _paid_task_payment(adapter, stripe, amount="150.00") -> tuple[str, str]:
    """A task payment the poster paid on Stripe's page: (our reference, the cs_ id; its intent's id)."""
    payment = adapter.create_payment(
        amount=Decimal(amount),
        currency="usd",
        metadata={"task_id": TASK, "bid_id": BID},
        idempotency_key=f"bid-select:{BID}:0",
        description="Task: Logo",
    )
    intent_id, _ = stripe.pay_session(payment.id)
    return payment.id, intent_id


def _transfer(adapter, account_id, source, *, amount="135.00", key=f"earning-transfer:{TASK}"):
    return adapter.create_transfer(
        account_id=account_id,
        amount=Decimal(amount),
        currency="usd",
        transfer_group=f"task:{TASK}",
        source_payment_id=source,
        metadata={"task_id": TASK},
        idempotency_key=key,
    )


# --- Payout accounts -------------------------------------------------------------------------------


def test_a_payout_account_is_an_express_account_with_manual_payouts_under_the_callers_key(adapter, stripe):
    account = _account(adapter)

    [call] = stripe.posts("/v1/accounts")
    assert call.form == [
        ("type", "express"),
        ("country", "US"),
        ("email", "owner@example.com"),
        ("capabilities[transfers][requested]", "true"),
        ("settings[payouts][schedule][interval]", "manual"),
        ("metadata[user_id]", "u1"),
    ]
    assert (call.key, call.account) == ("payout-account:u1", None)
    assert account.id.startswith("acct_")
    assert (account.status, account.payouts_enabled) == (PayoutAccountStatus.ONBOARDING, False)
    assert account.metadata == {"user_id": "u1"}


def test_an_account_with_no_country_leaves_it_to_stripe(adapter, stripe):
    account = adapter.create_payout_account(email="a@example.com", country="", metadata={}, idempotency_key="k")

    assert [name for name, _ in stripe.posts("/v1/accounts")[0].form] == [
        "type",
        "email",
        "capabilities[transfers][requested]",
        "settings[payouts][schedule][interval]",
    ]
    assert stripe.accounts[account.id]["country"] == "US"  # the platform's


def test_a_retried_account_create_makes_one_account_and_other_parameters_are_refused(adapter, stripe):
    first, again = _account(adapter), _account(adapter)

    assert again.id == first.id
    assert stripe.objects_created("/v1/accounts") == len(stripe.accounts) == 1
    with pytest.raises(ProviderError, match="same parameters"):
        _account(adapter, email="someone-else@example.com")
    assert len(stripe.accounts) == 1


def test_an_account_is_onboarding_then_active_then_restricted_as_stripe_reports_it(adapter, stripe):
    account_id = _account(adapter).id
    assert adapter.get_payout_account(account_id).status == PayoutAccountStatus.ONBOARDING

    stripe.complete_onboarding(account_id, name="Copybot Ltd")
    active = adapter.get_payout_account(account_id)
    assert (active.status, active.payouts_enabled, active.display_name) == ("active", True, "Copybot Ltd")

    stripe.restrict(account_id)
    restricted = adapter.get_payout_account(account_id)
    assert (restricted.status, restricted.payouts_enabled) == ("restricted", False)
    assert [c.path for c in stripe.calls if c.method == "GET"] == [f"/v1/accounts/{account_id}"] * 3


@pytest.mark.parametrize(
    ("account", "status"),
    [
        # A new account: Stripe lists everything as past due until the owner starts; that is onboarding.
        (
            {
                "details_submitted": False,
                "requirements": {"past_due": ["external_account"], "disabled_reason": "requirements.past_due"},
            },
            "onboarding",
        ),
        ({"details_submitted": True, "payouts_enabled": False, "requirements": {"past_due": []}}, "onboarding"),
        ({"details_submitted": True, "payouts_enabled": True, "charges_enabled": True, "requirements": {}}, "active"),
        ({"details_submitted": True, "payouts_enabled": True, "capabilities": {"transfers": "active"}}, "active"),
        (
            {
                "details_submitted": True,
                "payouts_enabled": True,
                "requirements": {"past_due": ["individual.id_number"]},
            },
            "restricted",
        ),
        (
            {
                "details_submitted": True,
                "payouts_enabled": False,
                "requirements": {"disabled_reason": "requirements.past_due"},
            },
            "restricted",
        ),
        ({"details_submitted": False, "requirements": {"disabled_reason": "rejected.fraud"}}, "restricted"),
    ],
)
def test_the_account_status_rule(account, status):
    assert payout_account_status(account) == status


def test_an_onboarding_link_is_an_account_link_asked_without_a_key(adapter, stripe):
    account_id = _account(adapter).id

    url = adapter.create_onboarding_link(
        account_id=account_id,
        return_url="https://app.example.com/payouts/return",
        refresh_url="https://app.example.com/payouts/refresh",
    )

    [call] = stripe.posts("/v1/account_links")
    assert call.form == [
        ("account", account_id),
        ("refresh_url", "https://app.example.com/payouts/refresh"),
        ("return_url", "https://app.example.com/payouts/return"),
        ("type", "account_onboarding"),
    ]
    assert call.key is None  # single-use and short-lived: a retry must get a fresh link
    assert url.startswith(f"https://connect.stripe.test/setup/e/{account_id}/")
    with pytest.raises(ProviderError, match="No such account"):
        adapter.create_onboarding_link(
            account_id="acct_missing", return_url="https://a.test/r", refresh_url="https://a.test/f"
        )


# --- Capture when paid -----------------------------------------------------------------------------


def test_a_task_payment_is_captured_when_paid_in_its_tasks_transfer_group(adapter, stripe):
    reference, intent_id = _paid_task_payment(adapter, stripe)

    form = stripe.posts("/v1/checkout/sessions")[0].fields
    assert form["payment_intent_data[capture_method]"] == "automatic"
    assert form["payment_intent_data[transfer_group]"] == f"task:{TASK}"
    assert stripe.intents[intent_id]["transfer_group"] == f"task:{TASK}"
    # Captured: the money is in the platform's balance (ours: succeeded); releasing asks Stripe nothing new.
    assert adapter.get_payment(reference).status == PaymentStatus.SUCCEEDED
    assert adapter.release_payment(reference).status == PaymentStatus.SUCCEEDED
    assert stripe.intents[intent_id]["status"] == "succeeded"


def test_a_payment_held_before_capture_on_pay_is_still_captured_on_release(adapter, stripe):
    intent = stored_intent(stripe, {"amount": "15000", "currency": "usd", "capture_method": "manual"})
    stripe.pay(intent["id"])
    assert adapter.get_payment(intent["id"]).status == PaymentStatus.SUCCEEDED

    assert adapter.release_payment(intent["id"]).status == PaymentStatus.RELEASED
    assert stripe.posts(f"/v1/payment_intents/{intent['id']}/capture")[0].form == []


# --- Transfers and reversals -----------------------------------------------------------------------


def test_a_transfer_moves_the_sellers_share_from_the_payments_charge(adapter, stripe):
    account_id = _active_account(adapter, stripe)
    reference, intent_id = _paid_task_payment(adapter, stripe)

    transfer = _transfer(adapter, account_id, reference)

    [call] = stripe.posts("/v1/transfers")
    charge_id = stripe.intents[intent_id]["latest_charge"]
    assert call.form == [
        ("amount", "13500"),
        ("currency", "usd"),
        ("destination", account_id),
        ("transfer_group", f"task:{TASK}"),
        ("source_transaction", charge_id),
        ("metadata[task_id]", TASK),
    ]
    assert (call.key, call.account) == (f"earning-transfer:{TASK}", None)
    assert transfer.id.startswith("tr_")
    assert (transfer.account_id, transfer.amount, transfer.currency) == (account_id, Decimal("135.00"), "usd")
    assert (transfer.amount_reversed, transfer.metadata) == (Decimal("0.00"), {"task_id": TASK})
    # The charge was found from the session: the session, then its intent with the charge expanded.
    reads = [(c.path, c.form) for c in stripe.calls if c.method == "GET"]
    assert reads[-2:] == [
        (f"/v1/checkout/sessions/{reference}", []),
        (f"/v1/payment_intents/{intent_id}", [("expand[]", "latest_charge")]),
    ]


def test_a_retried_transfer_makes_one_and_the_same_key_for_another_amount_is_refused(adapter, stripe):
    account_id = _active_account(adapter, stripe)
    _, intent_id = _paid_task_payment(adapter, stripe)

    first, again = _transfer(adapter, account_id, intent_id), _transfer(adapter, account_id, intent_id)

    assert again == first
    assert len(stripe.transfers) == stripe.objects_created("/v1/transfers") == 1
    assert stripe.balances[account_id] == {"usd": 13500}
    with pytest.raises(ProviderError, match="same parameters"):
        _transfer(adapter, account_id, intent_id, amount="140.00")
    with pytest.raises(ProviderError, match="exceeds"):  # more than the charge holds, under a new key
        _transfer(adapter, account_id, intent_id, amount="20.00", key=f"earning-transfer:{TASK}:2")
    assert len(stripe.transfers) == 1


def test_no_transfer_is_asked_for_a_payment_that_has_no_charge(adapter, stripe):
    account_id = _active_account(adapter, stripe)
    unpaid = adapter.create_payment(
        amount=Decimal("150.00"), currency="usd", metadata={"task_id": TASK}, idempotency_key="bid-select:x:0"
    )

    with pytest.raises(ProviderError, match="no charge"):
        _transfer(adapter, account_id, unpaid.id)
    assert stripe.posts("/v1/transfers") == []


def test_a_transfer_is_reversed_in_part_then_in_full_each_once(adapter, stripe):
    account_id = _active_account(adapter, stripe)
    _, intent_id = _paid_task_payment(adapter, stripe)
    transfer = _transfer(adapter, account_id, intent_id)

    reversed_once = adapter.reverse_transfer(transfer_id=transfer.id, amount=Decimal("35.00"), idempotency_key="r:1")
    retried = adapter.reverse_transfer(transfer_id=transfer.id, amount=Decimal("35.00"), idempotency_key="r:1")

    calls = stripe.posts(f"/v1/transfers/{transfer.id}/reversals")
    assert [(c.form, c.key) for c in calls] == [([("amount", "3500"), ("expand[]", "transfer")], "r:1")] * 2
    assert reversed_once == retried
    assert (reversed_once.id, reversed_once.amount_reversed) == (transfer.id, Decimal("35.00"))
    assert stripe.transfers[transfer.id]["amount_reversed"] == 3500
    assert stripe.balances[account_id] == {"usd": 10000}

    with pytest.raises(ProviderError, match="more than is left"):
        adapter.reverse_transfer(transfer_id=transfer.id, amount=Decimal("100.01"), idempotency_key="r:2")
    rest = adapter.reverse_transfer(transfer_id=transfer.id, amount=Decimal("100.00"), idempotency_key="r:3")
    assert rest.amount_reversed == rest.amount == Decimal("135.00")


# --- Partial refunds -------------------------------------------------------------------------------


def test_a_partial_refund_refunds_that_much_of_the_charge_once(adapter, stripe):
    reference, intent_id = _paid_task_payment(adapter, stripe)

    payment = adapter.refund_payment_partially(payment_id=reference, amount=Decimal("60.00"), idempotency_key="split:1")
    adapter.refund_payment_partially(payment_id=reference, amount=Decimal("60.00"), idempotency_key="split:1")

    calls = stripe.posts("/v1/refunds")
    form = [("payment_intent", intent_id), ("amount", "6000"), ("metadata[operation]", "split:1")]
    assert [(c.form, c.key) for c in calls] == [(form, "split:1")] * 2
    assert stripe.charges[stripe.intents[intent_id]["latest_charge"]]["amount_refunded"] == 6000
    assert payment.status == PaymentStatus.SUCCEEDED  # a partial refund keeps the payment

    rest = adapter.refund_payment_partially(payment_id=intent_id, amount=Decimal("90.00"), idempotency_key="split:2")
    assert rest.status == PaymentStatus.REFUNDED
    with pytest.raises(ProviderError, match="greater than"):
        adapter.refund_payment_partially(payment_id=intent_id, amount=Decimal("0.01"), idempotency_key="split:3")


def test_a_partial_refund_of_a_held_payment_captures_only_the_rest(adapter, stripe):
    intent = stored_intent(stripe, {"amount": "15000", "currency": "usd", "capture_method": "manual"})
    stripe.pay(intent["id"])

    payment = adapter.refund_payment_partially(payment_id=intent["id"], amount=Decimal("60.00"), idempotency_key="s:1")

    [capture] = stripe.posts(f"/v1/payment_intents/{intent['id']}/capture")
    assert capture.form == [("amount_to_capture", "9000")]
    assert stripe.posts("/v1/refunds") == []
    assert payment.status == PaymentStatus.RELEASED
    charge = stripe.charges[stripe.intents[intent["id"]]["latest_charge"]]
    assert (charge["amount_captured"], charge["amount_refunded"]) == (9000, 6000)


# --- Payouts ---------------------------------------------------------------------------------------


def _funded_account(adapter, stripe) -> str:
    account_id = _active_account(adapter, stripe)
    _, intent_id = _paid_task_payment(adapter, stripe)
    _transfer(adapter, account_id, intent_id)
    return account_id


def _payout(adapter, account_id, *, amount="135.00", key="payout:p1"):
    return adapter.create_payout(
        account_id=account_id, amount=Decimal(amount), currency="usd", metadata={"payout_id": "p1"}, idempotency_key=key
    )


def test_a_payout_is_made_as_the_connected_account_and_settled_by_stripe(adapter, stripe):
    account_id = _funded_account(adapter, stripe)

    payout = _payout(adapter, account_id)

    [call] = stripe.posts("/v1/payouts")
    assert call.form == [("amount", "13500"), ("currency", "usd"), ("metadata[payout_id]", "p1")]
    assert (call.key, call.account) == ("payout:p1", account_id)
    assert payout.id.startswith("po_")
    assert (payout.account_id, payout.amount, payout.status) == (account_id, Decimal("135.00"), "pending")

    stripe.settle_payout(payout.id)
    assert adapter.get_payout(account_id=account_id, payout_id=payout.id).status == "paid"
    assert stripe.calls[-1].account == account_id


def test_a_retried_payout_makes_one_and_keys_are_scoped_to_the_account(adapter, stripe):
    account_id = _funded_account(adapter, stripe)

    first, again = _payout(adapter, account_id, amount="100.00"), _payout(adapter, account_id, amount="100.00")

    assert again == first
    assert len(stripe.payouts) == 1
    with pytest.raises(ProviderError, match="insufficient funds"):  # 35.00 is left
        _payout(adapter, account_id, amount="35.01", key="payout:p2")
    assert len(stripe.payouts) == 1


def test_a_failed_payout_reports_why_and_gives_the_money_back(adapter, stripe):
    account_id = _funded_account(adapter, stripe)
    payout = _payout(adapter, account_id)

    stripe.settle_payout(payout.id, paid=False)

    failed = adapter.get_payout(account_id=account_id, payout_id=payout.id)
    assert (failed.status, failed.failure_reason) == ("failed", "The bank account has been closed.")
    assert stripe.balances[account_id] == {"usd": 13500}


def test_an_account_id_that_is_not_a_stripe_id_never_reaches_a_header_or_a_url(adapter, stripe):
    with pytest.raises(ProviderError):
        _payout(adapter, "acct_1\r\nX-Evil: 1")
    with pytest.raises(ProviderError):
        adapter.get_payout_account("acct_1/../../v1/customers")
    assert stripe.calls == []


# --- Failures --------------------------------------------------------------------------------------


def _creates(adapter, account_id, intent_id, transfer_id):
    return {
        "account": lambda: _account(adapter, key="payout-account:u2"),
        "link": lambda: adapter.create_onboarding_link(
            account_id=account_id, return_url="https://a.test/r", refresh_url="https://a.test/f"
        ),
        "transfer": lambda: _transfer(adapter, account_id, intent_id, amount="10.00", key="t:9"),
        "reversal": lambda: adapter.reverse_transfer(
            transfer_id=transfer_id, amount=Decimal("1.00"), idempotency_key="r:9"
        ),
        "refund": lambda: adapter.refund_payment_partially(
            payment_id=intent_id, amount=Decimal("1.00"), idempotency_key="s:9"
        ),
        "payout": lambda: _payout(adapter, account_id, amount="1.00", key="payout:p9"),
    }


@pytest.mark.parametrize("create", ["account", "link", "transfer", "reversal", "refund", "payout"])
@pytest.mark.parametrize(
    ("status", "error", "message"),
    [(500, ProviderError, "failed to process"), (429, ProviderUnavailable, "rate limiting")],
)
def test_stripe_failing_a_create_maps_to_our_errors_and_a_retry_makes_it_once(
    adapter, stripe, create, status, error, message
):
    account_id = _funded_account(adapter, stripe)
    calls = _creates(adapter, account_id, next(iter(stripe.intents)), next(iter(stripe.transfers)))
    before = len(stripe.calls)

    stripe.fail_next = [status]
    with pytest.raises(error, match=message):
        calls[create]()
    calls[create]()  # a failure before Stripe executed is not remembered for the key: this one makes it

    failed, made = [c for c in stripe.calls[before:] if c.method == "POST"]
    assert (failed.path, failed.form, failed.key) == (made.path, made.form, made.key)


def test_an_unreachable_stripe_is_unavailable(settings):
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    adapter = StripePaymentProvider(api_key="sk_test", base_url=f"http://127.0.0.1:{port}")

    with pytest.raises(ProviderUnavailable, match="cannot be reached"):
        adapter.create_payout_account(email="a@example.com", country="US", metadata={}, idempotency_key="k")


# --- Events the stand-in sends ---------------------------------------------------------------------


def test_the_stand_ins_events_are_stripes_shape_and_verify_under_the_webhook_secret(adapter, stripe, settings):
    account_id = _funded_account(adapter, stripe)
    payout = _payout(adapter, account_id)
    intent_id = next(iter(stripe.intents))
    dispute_id, disputed = stripe.open_dispute(intent_id)

    events = {
        "account.updated": (stripe.restrict(account_id), account_id),
        "payout.paid": (stripe.settle_payout(payout.id), account_id),
        "charge.dispute.created": (disputed, None),
        "charge.dispute.closed": (stripe.close_dispute(dispute_id, status="lost"), None),
        "payment_intent.canceled": (stripe.expire_authorisation(intent_id), None),
    }

    for event_type, (event, account) in events.items():
        body = json.loads(event.body)
        assert (body["type"], body["object"], body.get("account")) == (event_type, "event", account)
        assert signing.verify(event.body, event.headers[signing.STRIPE_HEADER], settings.PAYMENTS_WEBHOOK_SECRET)
    assert json.loads(events["payout.paid"][0].body)["data"]["object"]["id"] == payout.id
    dispute = json.loads(disputed.body)["data"]["object"]
    assert (dispute["payment_intent"], dispute["amount"], dispute["status"]) == (intent_id, 15000, "needs_response")
    assert json.loads(events["payment_intent.canceled"][0].body)["data"]["object"]["cancellation_reason"] == "automatic"
