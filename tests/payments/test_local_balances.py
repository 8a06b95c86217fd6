"""The local provider's balances (docs/payouts.md#reconciliation): every capture, refund, transfer, reversal,
payout, failed payout and dispute writes its balance transactions with the object that moved the money, a
balance is their sum, and what a real provider refuses for lack of funds is refused. Lookups find what a
create made after its key is forgotten; the simulated provider events have Stripe's shapes."""

from __future__ import annotations

import json
import uuid
from decimal import Decimal

import pytest
from django.core.management import call_command

from core.http.errors import ProviderError
from payments import signing
from payments.models import LocalBalanceTransaction, LocalConnectObject
from payments.providers.local import LocalPaymentProvider
from payments.services.captures import refund_once

pytestmark = pytest.mark.django_db

provider = LocalPaymentProvider()
TASK = "7d0c1c4e-3f4a-4a53-9b7e-0d3c1c1f6a10"


def paid(amount="150.00", currency="usd", task=TASK) -> str:
    """A payment the poster paid (captured): its id."""
    metadata = {"task_id": task} if task else {"kind": "credit_top_up"}
    payment = provider.create_payment(
        amount=Decimal(amount), currency=currency, metadata=metadata, idempotency_key=f"test:{uuid.uuid4()}"
    )
    provider.simulate_payment(payment.id, "succeeded")
    return payment.id


def active_account() -> str:
    account = provider.create_payout_account(
        email="seller@example.com", country="DE", metadata={}, idempotency_key=f"acct:{uuid.uuid4()}"
    )
    link = provider.create_onboarding_link(account_id=account.id, return_url="https://a.test/r", refresh_url="")
    provider.complete_onboarding(link_id=link.rsplit("/", 1)[1], display_name="Bob", bank_account="DE8937040044")
    return account.id


def transfer(account_id, amount="135.00", key=None, **extra):
    return provider.create_transfer(
        account_id=account_id,
        amount=Decimal(amount),
        currency="usd",
        transfer_group="payout:p1",
        metadata={"payout_id": "p1"},
        idempotency_key=key or f"payout:{uuid.uuid4()}:transfer",
        **extra,
    )


def payout(account_id, amount="135.00", key=None, payout_id="p1"):
    return provider.create_payout(
        account_id=account_id,
        amount=Decimal(amount),
        currency="usd",
        metadata={"payout_id": payout_id},
        idempotency_key=key or f"payout:{uuid.uuid4()}",
    )


def moves(account="") -> list[tuple[str, int, int, int]]:
    rows = LocalBalanceTransaction.objects.filter(account=account).order_by("created_at", "id")
    return [(row.type, row.amount_minor, row.fee_minor, row.net_minor) for row in rows]


def test_a_captured_payment_enters_the_platforms_balance_once():
    payment_id = paid()
    provider.simulate_payment(payment_id, "succeeded")  # settling it again moves nothing
    provider.release_payment(payment_id)  # captured already: releasing moves nothing either

    assert provider.balance() == {"usd": Decimal("150.00")}
    [charge] = provider.balance_transactions()
    assert (charge.type, charge.amount, charge.fee, charge.net) == ("charge", Decimal("150.00"), 0, Decimal("150.00"))
    assert (charge.source, charge.group) == (payment_id, f"task:{TASK}")


def test_a_declined_or_unpaid_payment_moves_nothing():
    payment = provider.create_payment(amount=Decimal("10.00"), currency="usd", metadata={}, idempotency_key="k1")
    provider.simulate_payment(payment.id, "failed")

    assert provider.balance() == {}
    assert list(provider.balance_transactions()) == []


def test_refunds_partial_then_whole_leave_the_balance_each_once_and_can_be_found():
    payment_id = paid()

    provider.refund_payment_partially(payment_id=payment_id, amount=Decimal("50.00"), idempotency_key="split:1")
    provider.refund_payment_partially(payment_id=payment_id, amount=Decimal("50.00"), idempotency_key="split:1")
    provider.refund_payment(payment_id)
    provider.refund_payment(payment_id)

    assert moves() == [("charge", 15000, 0, 15000), ("refund", -5000, 0, -5000), ("refund", -10000, 0, -10000)]
    assert provider.balance() == {"usd": Decimal("0.00")}
    partial = provider.find_refund(payment_id=payment_id, idempotency_key="split:1")
    whole = provider.find_refund(payment_id=payment_id, idempotency_key=f"refund:{payment_id}")
    assert (partial.amount, partial.metadata) == (Decimal("50.00"), {"operation": "split:1"})
    assert (whole.amount, whole.payment_id, whole.status) == (Decimal("100.00"), payment_id, "succeeded")
    assert provider.find_refund(payment_id=payment_id, idempotency_key="split:2") is None
    assert [txn.source for txn in provider.balance_transactions()][1:] == [partial.id, whole.id]


def test_a_transfer_moves_money_from_the_platform_to_the_account_and_a_reversal_back():
    payment_id = paid()
    account_id = active_account()

    made = transfer(account_id, key="payout:p1:transfer")
    again = transfer(account_id, key="payout:p1:transfer")
    provider.reverse_transfer(transfer_id=made.id, amount=Decimal("35.00"), idempotency_key="recovery:1")
    provider.reverse_transfer(transfer_id=made.id, amount=Decimal("35.00"), idempotency_key="recovery:1")

    assert again == made
    assert provider.balance() == {"usd": Decimal("50.00")}  # 150 - 135 + 35
    assert provider.balance(account_id=account_id) == {"usd": Decimal("100.00")}
    assert moves(account_id) == [("transfer", 13500, 0, 13500), ("transfer_reversal", -3500, 0, -3500)]
    platform = list(provider.balance_transactions())
    assert [(txn.type, txn.source) for txn in platform] == [
        ("charge", payment_id),
        ("transfer", made.id),
        ("transfer_reversal", LocalConnectObject.objects.get(kind="reversal").id),
    ]


def test_a_transfer_needs_no_source_payment_but_the_platforms_balance_must_cover_it():
    account_id = active_account()
    with pytest.raises(ProviderError, match=r"Insufficient funds.*platform's balance"):
        transfer(account_id, amount="0.01")

    paid(amount="100.00")
    with pytest.raises(ProviderError, match="Insufficient funds"):
        transfer(account_id, amount="100.01")
    with pytest.raises(ProviderError, match="Insufficient funds"):  # the balance is per currency
        provider.create_transfer(
            account_id=account_id,
            amount=Decimal("1"),
            currency="eur",
            transfer_group="",
            metadata={},
            idempotency_key="t:eur",
        )
    made = transfer(account_id, amount="100.00", key="t:all")
    assert made.amount == Decimal("100.00")
    assert transfer(account_id, amount="100.00", key="t:all") == made  # a retry is no second transfer
    assert LocalConnectObject.objects.filter(kind="transfer").count() == 1


def test_a_payout_and_a_reversal_cannot_take_more_than_the_account_holds():
    paid()
    account_id = active_account()
    made = transfer(account_id)

    with pytest.raises(ProviderError, match=r"Insufficient funds.*a payout"):
        payout(account_id, amount="135.01")
    sent = payout(account_id, key="payout:p1")
    assert payout(account_id, key="payout:p1") == sent
    with pytest.raises(ProviderError, match=r"Insufficient funds.*a reversal"):
        provider.reverse_transfer(transfer_id=made.id, amount=Decimal("1.00"), idempotency_key="recovery:2")

    assert provider.balance(account_id=account_id) == {"usd": Decimal("0.00")}
    assert moves(account_id) == [("transfer", 13500, 0, 13500), ("payout", -13500, 0, -13500)]
    assert LocalConnectObject.objects.filter(kind="reversal", status="succeeded").count() == 0


def test_a_paid_payout_that_fails_returns_the_money_and_is_announced_on_the_account(settings):
    paid()
    account_id = active_account()
    transfer(account_id)
    sent = payout(account_id, payout_id="p9")

    failed, event = provider.simulate_payout_failure(sent.id)
    provider.simulate_payout_failure(sent.id)  # announced again: the money returns once

    assert (failed.status, failed.failure_reason) == ("failed", "The bank account is closed.")
    assert provider.balance(account_id=account_id) == {"usd": Decimal("135.00")}
    assert moves(account_id)[-1] == ("payout_failure", 13500, 0, 13500)
    body = json.loads(event.body)
    assert (body["type"], body["account"]) == ("payout.failed", account_id)
    assert body["data"]["object"] | {"created": 0} == {
        "id": sent.id,
        "object": "payout",
        "amount": 13500,
        "currency": "usd",
        "status": "failed",
        "method": "standard",
        "failure_code": "account_closed",
        "failure_message": "The bank account is closed.",
        "metadata": {"payout_id": "p9"},
        "created": 0,
    }
    assert signing.verify(event.body, event.headers[signing.HEADER], settings.PAYMENTS_WEBHOOK_SECRET)


def test_lookups_find_what_a_create_made():
    paid()
    account_id = active_account()
    made = transfer(account_id)
    sent = payout(account_id, payout_id="p1")

    assert provider.find_transfer(transfer_group="payout:p1", metadata_key="payout_id", metadata_value="p1") == made
    assert provider.find_transfer(transfer_group="payout:p1", metadata_key="payout_id", metadata_value="p2") is None
    assert provider.find_transfer(transfer_group="payout:p2", metadata_key="payout_id", metadata_value="p1") is None
    assert provider.find_payout(account_id=account_id, payout_id="p1") == sent
    assert provider.find_payout(account_id=account_id, payout_id="p2") is None
    assert provider.find_payout(account_id="acct_other", payout_id="p1") is None


def test_a_dashboard_refund_leaves_the_balance_and_announces_the_charge_refunded():
    payment_id = paid()

    payment, event = provider.simulate_dashboard_refund(payment_id, Decimal("40.00"))

    assert payment.status == "succeeded"  # in part
    assert provider.balance() == {"usd": Decimal("110.00")}
    charge = json.loads(event.body)["data"]["object"]
    assert json.loads(event.body)["type"] == "charge.refunded"
    assert (charge["object"], charge["payment_intent"], charge["amount"]) == ("charge", payment_id, 15000)
    assert (charge["amount_refunded"], charge["refunded"]) == (4000, False)
    [refund] = LocalConnectObject.objects.filter(kind="refund")
    assert refund.data["metadata"] == {}  # made outside our calls: no operation of ours


def _events(events) -> list[tuple[str, dict]]:
    return [(json.loads(e.body)["type"], json.loads(e.body)["data"]["object"]) for e in events]


def test_a_lost_dispute_withdraws_the_amount_and_the_fee(settings):
    settings.PAYMENTS_LOCAL_DISPUTE_FEE = "15.00"
    payment_id = paid()

    dispute_id, opened = provider.simulate_dispute(payment_id, "needs_response")
    same_id, closed = provider.simulate_dispute(payment_id, "lost")

    assert same_id == dispute_id and dispute_id.startswith("dp_")
    [(created, dispute), (withdrawn, after)] = _events(opened)
    assert (created, withdrawn) == ("charge.dispute.created", "charge.dispute.funds_withdrawn")
    assert (dispute["payment_intent"], dispute["amount"], dispute["status"]) == (payment_id, 15000, "needs_response")
    [txn] = after["balance_transactions"]
    assert (txn["amount"], txn["fee"], txn["net"], txn["currency"]) == (-15000, 1500, -16500, "usd")
    assert (txn["type"], txn["source"]) == ("adjustment", dispute_id)
    assert [(kind, obj["status"]) for kind, obj in _events(closed)] == [("charge.dispute.closed", "lost")]
    assert provider.balance() == {"usd": Decimal("-15.00")}  # the payment is gone and the fee paid


@pytest.mark.parametrize("status", ["won", "prevented"])
def test_a_dispute_not_lost_gives_the_amount_back_and_keeps_the_fee(status):
    payment_id = paid()
    provider.simulate_dispute(payment_id, "needs_response")

    _, events = provider.simulate_dispute(payment_id, "under_review")
    assert [kind for kind, _ in _events(events)] == ["charge.dispute.updated"]
    _, events = provider.simulate_dispute(payment_id, status)

    [(reinstated, obj), (closed, final)] = _events(events)
    assert (reinstated, closed, final["status"]) == ("charge.dispute.funds_reinstated", "charge.dispute.closed", status)
    assert [(t["amount"], t["fee"], t["net"]) for t in obj["balance_transactions"]] == [
        (-15000, 1500, -16500),
        (15000, 0, 15000),
    ]
    assert provider.balance() == {"usd": Decimal("135.00")}
    with pytest.raises(ProviderError, match="no open dispute"):
        provider.simulate_dispute(payment_id, "lost")


def test_an_inquiry_withdraws_nothing_and_closes_without_money():
    payment_id = paid(currency="jpy", amount="15000")

    _, opened = provider.simulate_dispute(payment_id, "warning_needs_response")
    _, closed = provider.simulate_dispute(payment_id, "warning_closed")

    assert [kind for kind, _ in _events(opened)] == ["charge.dispute.created"]
    assert [(kind, obj["status"]) for kind, obj in _events(closed)] == [("charge.dispute.closed", "warning_closed")]
    assert provider.balance() == {"jpy": Decimal("15000")}


def test_a_dispute_lost_without_a_withdrawal_withdraws_when_it_closes(settings):
    settings.PAYMENTS_LOCAL_DISPUTE_FEE = "0"
    payment_id = paid()
    provider.simulate_dispute(payment_id, "warning_needs_response")

    _, closed = provider.simulate_dispute(payment_id, "lost")

    assert [kind for kind, _ in _events(closed)] == ["charge.dispute.funds_withdrawn", "charge.dispute.closed"]
    assert provider.balance() == {"usd": Decimal("0.00")}


def test_a_charge_whose_funds_a_dispute_withdrew_cannot_be_refunded_until_they_are_reinstated():
    """Stripe marks a disputed charge `is_charge_refundable: false` while the bank holds its money (an open
    chargeback, or a lost one): a refund would pay the poster twice. An inquiry withdraws nothing, and a won
    dispute gives the money back, so the charge is refundable again."""
    payment_id = paid()
    provider.refund_payment_partially(payment_id=payment_id, amount=Decimal("10.00"), idempotency_key="before")
    dispute_id, _ = provider.simulate_dispute(payment_id, "needs_response")

    for refund in (
        lambda: provider.refund_payment_partially(payment_id=payment_id, amount=Decimal("5.00"), idempotency_key="r1"),
        lambda: provider.refund_payment(payment_id),
        lambda: provider.simulate_dashboard_refund(payment_id, Decimal("5.00")),
    ):
        with pytest.raises(ProviderError, match=dispute_id):
            refund()
    # The refund made before the dispute is still answered for its key, and nothing more moved.
    provider.refund_payment_partially(payment_id=payment_id, amount=Decimal("10.00"), idempotency_key="before")
    assert [t for t, *_ in moves() if t == "refund"] == ["refund"]
    assert provider.get_payment(payment_id).status == "succeeded"

    provider.simulate_dispute(payment_id, "won")  # the funds are reinstated: refundable again
    refunded = provider.refund_payment(payment_id)
    assert refunded.status == "refunded"
    assert [t for t, *_ in moves() if t == "refund"] == ["refund", "refund"]


@pytest.mark.parametrize("opened", ["needs_response", "warning_needs_response"])
def test_a_charge_of_a_lost_dispute_cannot_be_refunded_and_an_inquirys_can_until_it_is_lost(opened):
    payment_id = paid()
    dispute_id, _ = provider.simulate_dispute(payment_id, opened)
    if opened == "warning_needs_response":  # an inquiry withdrew nothing: the charge is refundable
        provider.refund_payment_partially(payment_id=payment_id, amount=Decimal("5.00"), idempotency_key="inq")

    provider.simulate_dispute(payment_id, "lost")

    with pytest.raises(ProviderError, match=dispute_id):
        provider.refund_payment(payment_id)
    assert provider.get_payment(payment_id).status == "succeeded"


def test_payments_simulate_opens_a_dispute_and_fails_a_payout_from_the_command_line(capsys):
    payment_id = paid()
    account_id = active_account()
    transfer(account_id)
    sent = payout(account_id)

    call_command("payments_simulate", payment_id, "--dashboard-refund", "10.00", "--no-send")
    call_command("payments_simulate", payment_id, "--dispute", "needs_response", "--no-send")
    call_command("payments_simulate", sent.id, "failed", "--no-send")

    out = capsys.readouterr().out
    for kind in ("charge.dispute.created", "charge.dispute.funds_withdrawn", "charge.refunded", "payout.failed"):
        assert f"({kind})" in out
    assert provider.balance(account_id=account_id) == {"usd": Decimal("135.00")}


def test_a_refund_retried_after_the_provider_forgot_its_key_is_found_not_made_again():
    """A resolution finished a day later: the key no longer deduplicates at the provider (docs/payouts.md#
    retries-after-a-day), so refund_once looks the refund up by its metadata first."""
    payment_id = paid()
    first = refund_once(payment_id=payment_id, amount=Decimal("50.00"), idempotency_key="dispute:r1:refund")
    LocalConnectObject.objects.filter(kind="refund").update(idempotency_key=None)  # a day later

    again = refund_once(payment_id=payment_id, amount=Decimal("50.00"), idempotency_key="dispute:r1:refund")
    whole = refund_once(payment_id=payment_id)
    LocalConnectObject.objects.filter(kind="refund").update(idempotency_key=None)

    assert again == first and first.startswith("re_")
    assert refund_once(payment_id=payment_id) == whole != first
    assert moves() == [("charge", 15000, 0, 15000), ("refund", -5000, 0, -5000), ("refund", -10000, 0, -10000)]
