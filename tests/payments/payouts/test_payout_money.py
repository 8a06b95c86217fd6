"""A payout moves real money (docs/payouts.md#payouts): the holding period, one transfer and one payout per
payout, a payout failing (even after paid) or refused at create, a retry after the provider forgot its key,
a chargeback racing the payout's claim, recovery of a debt from the connected account, and the events
about accounts and reversals. On the local provider, whose balances are what moved, and the signed
inbound endpoint."""

from __future__ import annotations

import json
import threading
import time
from datetime import timedelta
from decimal import Decimal

import pytest
from django.db import connection, transaction
from django.utils import timezone

from payments import ledger, signing
from payments.ledger_check import ledger_problems
from payments.models import (
    Earning,
    LedgerEntry,
    LocalConnectObject,
    Payout,
    PayoutAccount,
    TransferReversal,
)
from payments.provider_events import build_event
from payments.providers.local import LocalPaymentProvider
from payments.services.accounts import payout_account_start
from payments.services.chargebacks import chargeback_open
from payments.services.earnings import earning_record, earnings_settle
from payments.services.payouts import debt_recover, payout_owner, payout_send, payouts_run
from tests.conftest import client_with_token, jwt_for
from tests.payments.payouts.conftest import in_review, onboard, payment_of
from tests.support.factories import UserFactory

pytestmark = pytest.mark.django_db


def post_event(api, event_type: str, obj: dict, *, account: str = "") -> str:
    """A provider event (Stripe's shape; `account` for a connected account's) through the signed endpoint."""
    event = build_event(event_type, obj, account=account)
    response = api.post("/api/v1/webhooks/payments", data=event.body, content_type="application/json", **{
        "HTTP_PAYMENTS_SIGNATURE": event.headers[signing.HEADER]
    })  # fmt: skip
    assert response.status_code == 200, response.content
    return response.json()["status"]


def approved(alice_api, seller_api, api) -> str:
    task_id = in_review(alice_api, seller_api, api)["task"]["id"]
    assert alice_api.post(f"/api/v1/tasks/{task_id}/delivery/approve").status_code == 200
    return task_id


def transfers() -> list[LocalConnectObject]:
    return list(LocalConnectObject.objects.filter(kind="transfer").order_by("created_at"))


def connected(owner_id) -> Decimal:
    return ledger.money_balance(ledger.connected(owner_id), "usd")


def available(owner_id) -> Decimal:
    return ledger.seller_balances(owner_id).get("usd", {}).get("available", Decimal(0))


def local_balance(account_id: str) -> Decimal:
    return LocalPaymentProvider().balance(account_id=account_id).get("usd", Decimal(0))


def failed_after_paid(api, payout: Payout, event_type: str = "payout.failed") -> str:
    """The bank sends the paid payout back (the local provider returns the money to the connected
    balance) and the provider says so, as `payout.failed` or `payout.canceled`."""
    _, event = LocalPaymentProvider().simulate_payout_failure(payout.provider_payout_id)
    obj = json.loads(event.body)["data"]["object"]
    if event_type == "payout.canceled":
        obj = {**obj, "status": "canceled"}
    return post_event(api, event_type, obj, account=payout.account.provider_account_id)


# --- The holding period --------------------------------------------------------------------------------


def test_a_released_earning_is_held_for_the_holding_period(alice_api, seller_api, seller, api, settings):
    settings.EARNING_HOLD_DAYS = 7
    onboard(seller)
    before = timezone.now()
    approved(alice_api, seller_api, api)
    earning = Earning.objects.get()

    assert before + timedelta(days=7) <= earning.available_after <= timezone.now() + timedelta(days=7)
    assert earning.hold_reason == "holding_period"
    assert payouts_run() == 0 and Earning.objects.get().status == "pending"
    assert payouts_run(now=timezone.now() + timedelta(days=7, minutes=1)) == 1
    assert Earning.objects.get().status == "paid_out" and Earning.objects.get().hold_reason == ""


# --- One transfer and one payout per payout --------------------------------------------------------------


def test_nothing_moves_at_release_then_a_payout_is_one_transfer_and_one_payout(alice_api, seller_api, seller, api):
    account = onboard(seller)
    task_id = approved(alice_api, seller_api, api)
    assert transfers() == []  # no transfer per earning at release

    assert payouts_run() == 1

    payout = Payout.objects.get()
    [transfer] = transfers()
    assert transfer.data["transfer_group"] == f"payout:{payout.id}"
    assert transfer.data["metadata"]["payout_id"] == str(payout.id)
    assert (payout.status, payout.transfer_id, payout.transfer_amount) == ("paid", transfer.id, Decimal("135.000"))
    earning = Earning.objects.get(source=f"task:{task_id}")
    assert (earning.status, earning.payout_id, earning.transfer_id) == ("paid_out", payout.pk, transfer.id)
    moved = {e.kind: e.provider_ref for e in LedgerEntry.objects.filter(source=f"payout:{payout.id}")}
    assert moved == {"payout": "", "transfer": transfer.id, "payout_paid": payout.provider_payout_id}
    assert connected(seller.pk) == 0 and local_balance(account.provider_account_id) == 0
    assert ledger_problems() == []


# --- Row 5: a payout failing after paid --------------------------------------------------------------------


@pytest.mark.parametrize("event_type", ["payout.failed", "payout.canceled"])
def test_a_payout_failing_after_paid_puts_the_money_back_and_is_paid_again_without_a_second_transfer(
    alice_api, seller_api, seller, api, event_type
):
    onboard(seller)
    approved(alice_api, seller_api, api)
    payouts_run()
    first = Payout.objects.select_related("account").get()
    assert first.status == "paid"

    assert failed_after_paid(api, first, event_type) == "processed"

    first.refresh_from_db()
    assert first.status == ("failed" if event_type == "payout.failed" else "canceled")
    assert Earning.objects.get().status == "available"
    assert available(seller.pk) == Decimal("135.000")  # the claim is back
    assert connected(seller.pk) == Decimal("135.000")  # the money is back in the connected account
    assert ledger_problems() == []

    assert payouts_run() == 1

    again = Payout.objects.exclude(pk=first.pk).get()
    assert (again.status, again.amount, again.transfer_amount) == ("paid", Decimal("135.000"), 0)
    assert len(transfers()) == 1  # paid from what the connected account held: no second transfer
    earning = Earning.objects.get()
    assert (earning.status, earning.payout_id, earning.transfer_id) == ("paid_out", again.pk, first.transfer_id)
    assert connected(seller.pk) == 0 and available(seller.pk) == 0
    assert ledger_problems() == []


# --- Row 6: a payout refused at create ---------------------------------------------------------------------


def test_a_payout_refused_at_create_fails_at_once_and_its_money_is_available_again(alice_api, seller_api, seller, api):
    account = onboard(seller)
    approved(alice_api, seller_api, api)
    # The provider restricted the account; its account.updated has not reached us yet.
    LocalConnectObject.objects.filter(id=account.provider_account_id).update(status="restricted")

    assert payouts_run() == 1

    payout = Payout.objects.get()
    assert payout.status == "failed" and "restricted" in payout.failure_reason  # never pending forever
    earning = Earning.objects.get()
    assert (earning.status, earning.payout_id, earning.transfer_id) == ("available", None, "")
    assert available(seller.pk) == Decimal("135.000")
    assert connected(seller.pk) == Decimal("135.000")  # the transfer went through; the money waits there
    assert ledger_problems() == []

    LocalConnectObject.objects.filter(id=account.provider_account_id).update(status="active")
    assert payouts_run() == 1
    assert Payout.objects.filter(status="paid").count() == 1 and len(transfers()) == 1
    assert Earning.objects.get().status == "paid_out"
    assert ledger_problems() == []


# --- Row 7: a retry after the provider forgot the idempotency key -------------------------------------------


def test_a_retry_older_than_the_key_lifetime_finds_the_transfer_and_payout_instead_of_making_them_again(
    alice_api, seller_api, seller, api, settings
):
    account = onboard(seller)
    approved(alice_api, seller_api, api)
    earnings_settle()
    payout = payout_owner(owner_id=seller.pk, currency="usd")
    # The first attempt made both objects at the provider, but neither answer reached us.
    provider = LocalPaymentProvider()
    for create in (provider.create_transfer, provider.create_payout):
        kwargs = {"account_id": account.provider_account_id, "amount": payout.amount, "currency": "usd"}
        if create == provider.create_transfer:
            kwargs.update(transfer_group=f"payout:{payout.id}", idempotency_key=f"payout:{payout.id}:transfer")
        else:
            kwargs.update(idempotency_key=payout.idempotency_key)
        create(**kwargs, metadata={"payout_id": str(payout.id)})
    Payout.objects.filter(pk=payout.pk).update(created_at=timezone.now() - timedelta(hours=30))
    # A day later the provider no longer knows the keys.
    LocalConnectObject.objects.filter(kind__in=("transfer", "payout")).update(idempotency_key=None)

    payout_send(payout_id=payout.pk)

    assert len(transfers()) == 1 and LocalConnectObject.objects.filter(kind="payout").count() == 1
    payout.refresh_from_db()
    [transfer] = transfers()
    assert (payout.status, payout.transfer_id) == ("paid", transfer.id)
    assert local_balance(account.provider_account_id) == 0
    assert ledger_problems() == []


# --- Row 8: a chargeback racing the payout's claim -------------------------------------------------------------


@pytest.mark.django_db(transaction=True)
def test_a_chargeback_racing_the_claim_is_never_paid_out(alice_api, seller_api, seller, api):
    onboard(seller)
    task_id = approved(alice_api, seller_api, api)
    earnings_settle()
    assert Earning.objects.get().status == "available"
    payment_ref = payment_of(task_id).provider_payment_id
    frozen, release = threading.Event(), threading.Event()
    results: dict[str, object] = {}

    def chargeback() -> None:
        try:
            with transaction.atomic():
                chargeback_open(payment_ref=payment_ref, dispute_id="dp_race")  # holds the earning's lock
                frozen.set()
                release.wait(10)
        finally:
            connection.close()

    def claim() -> None:
        try:
            results["payout"] = payout_owner(owner_id=seller.pk, currency="usd")
        except Exception as exc:  # reported below
            results["payout"] = exc
        finally:
            connection.close()

    first = threading.Thread(target=chargeback)
    first.start()
    assert frozen.wait(10)
    second = threading.Thread(target=claim)
    second.start()
    _wait_until_blocked()
    release.set()
    first.join()
    second.join()

    assert not isinstance(results["payout"], Exception), results["payout"]
    assert not Payout.objects.exists()  # the claim waited and saw the earning frozen: nothing to pay
    assert Earning.objects.get().status == "frozen"
    balances = ledger.seller_balances(seller.pk)["usd"]
    assert (balances["available"], balances["frozen"]) == (0, Decimal("135.000"))
    assert ledger_problems() == []


def _wait_until_blocked(timeout: float = 10.0) -> None:
    """Until another session waits on a row lock (the claim behind the chargeback's transaction)."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        with connection.cursor() as cursor:
            cursor.execute(
                "SELECT count(*) FROM pg_stat_activity WHERE wait_event_type = 'Lock' AND datname = current_database()"
            )
            if cursor.fetchone()[0]:
                return
        time.sleep(0.05)
    raise AssertionError("the claim never waited for the chargeback's lock")


# --- Recovery -------------------------------------------------------------------------------------------------


def test_a_debt_is_recovered_from_a_failed_payouts_money_by_a_reversal(alice_api, seller_api, seller, api):
    account = onboard(seller)
    first_task = approved(alice_api, seller_api, api)
    payouts_run()
    approved(alice_api, seller_api, api)
    payouts_run()
    second = Payout.objects.select_related("account").order_by("created_at").last()
    failed_after_paid(api, second)
    assert connected(seller.pk) == Decimal("135.000") and available(seller.pk) == Decimal("135.000")

    # A chargeback on the first, paid-out earning: the seller owes 135, which the connected account holds.
    chargeback_open(payment_ref=payment_of(first_task).provider_payment_id, dispute_id="dp_debt")
    assert available(seller.pk) == 0
    reversal = debt_recover(owner_id=seller.pk, currency="usd", debt_key="chargeback:dp_debt")

    assert (reversal.status, reversal.amount, reversal.transfer_id) == ("done", Decimal("135.000"), second.transfer_id)
    assert debt_recover(owner_id=seller.pk, currency="usd", debt_key="chargeback:dp_debt") is None  # once
    assert connected(seller.pk) == 0 and local_balance(account.provider_account_id) == 0
    assert LocalConnectObject.objects.get(id=second.transfer_id).data["amount_reversed"] == 13500
    assert payouts_run() == 0  # nothing is owed: the debt was paid back in money
    assert TransferReversal.objects.count() == 1
    assert ledger_problems() == []


def test_a_reversal_made_elsewhere_is_booked_once_and_the_next_payout_transfers_what_is_owed(
    alice_api, seller_api, seller, api
):
    account = onboard(seller)
    approved(alice_api, seller_api, api)
    payouts_run()
    first = Payout.objects.select_related("account").get()
    failed_after_paid(api, first)
    LocalPaymentProvider().reverse_transfer(transfer_id=first.transfer_id, amount=Decimal("50.00"), idempotency_key="d")
    reversed_event = {"id": first.transfer_id, "object": "transfer", "currency": "usd", "amount_reversed": 5000}

    assert post_event(api, "transfer.reversed", reversed_event) == "processed"
    assert post_event(api, "transfer.reversed", reversed_event) == "processed"  # a repeat books nothing

    assert connected(seller.pk) == Decimal("85.000")
    assert payouts_run() == 1
    again = Payout.objects.exclude(pk=first.pk).get()
    assert (again.status, again.amount, again.transfer_amount) == ("paid", Decimal("135.000"), Decimal("50.000"))
    assert connected(seller.pk) == 0 and local_balance(account.provider_account_id) == 0
    assert ledger_problems() == []


# --- Account events ----------------------------------------------------------------------------------------


@pytest.mark.parametrize("event_type", ["capability.updated", "account.application.deauthorized"])
def test_an_account_that_can_no_longer_be_paid_is_restricted_and_not_paid(
    alice_api, seller_api, seller, api, event_type
):
    account = onboard(seller)
    approved(alice_api, seller_api, api)
    acct = account.provider_account_id
    if event_type == "capability.updated":
        obj = {"id": "transfers", "object": "capability", "account": acct, "status": "inactive"}
    else:
        obj = {"id": "ca_platform", "object": "application", "name": "Brand market"}

    assert post_event(api, event_type, obj, account=acct) == "processed"

    account.refresh_from_db()
    assert (account.status, account.payouts_enabled) == ("restricted", False)
    assert payouts_run() == 0 and available(seller.pk) == Decimal("135.000")


# --- The account's country, the pinned fee, the run's batches ----------------------------------------------


def test_a_payout_account_is_opened_in_the_given_country_or_the_default(seller, settings):
    settings.PAYOUT_ACCOUNT_DEFAULT_COUNTRY = "GB"
    other = UserFactory(email="other@example.com")

    given = payout_account_start(owner=seller, country="de").account
    default = payout_account_start(owner=other).account

    assert (given.country, default.country) == ("DE", "GB")
    assert LocalConnectObject.objects.get(id=given.provider_account_id).data["country"] == "DE"
    assert LocalConnectObject.objects.get(id=default.provider_account_id).data["country"] == "GB"


def test_a_pinned_fee_is_the_earnings_fee(seller, settings):
    settings.PLATFORM_FEE_PERCENT = 30
    earning = earning_record(
        owner_id=seller.pk,
        source="task:pinned",
        payment_ref="pi_pinned",
        provider="local",
        currency="usd",
        gross=Decimal("150.00"),
        now=timezone.now(),
        fee=Decimal("15.00"),
    )
    assert (earning.fee, earning.amount) == (Decimal("15.00"), Decimal("135.00"))


def test_the_run_pays_every_owed_owner_in_batches(alice_api, api, settings):
    settings.PAYOUT_BATCH_SIZE = 2
    owners = [UserFactory(email=f"seller{i}@example.com") for i in range(5)]
    for owner in owners:
        onboard(owner)
        approved(alice_api, client_with_token(jwt_for(owner)), api)

    assert payouts_run() == 5

    assert sorted(p.owner_id for p in Payout.objects.filter(status="paid")) == sorted(o.pk for o in owners)
    assert PayoutAccount.objects.count() == 5
    assert ledger_problems() == []
