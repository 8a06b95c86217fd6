"""Reconciliation (payments.reconcile; docs/payouts.md#reconciliation) against the local provider's real
balances: books that match what moved show no difference; a movement the books lack, an entry the provider
does not know, an entry naming no provider object and a balance that differs each show as one, from
`manage.py payments_reconcile` (exit 1) and from the daily job (logged at ERROR).

The ledger's entries are posted here as the money services post them (ledger.ledger_post), so these tests
do not depend on which service books which movement."""

from __future__ import annotations

import logging
import uuid
from datetime import timedelta
from decimal import Decimal

import pytest
from django.core.management import call_command
from django.utils import timezone

from payments import ledger
from payments.models import LedgerEntry, PayoutAccount
from payments.providers.local import LocalPaymentProvider
from payments.reconcile import Difference, reconcile, reconcile_and_alert
from tests.payments.test_local_balances import active_account, paid, payout, transfer
from tests.support.factories import UserFactory

pytestmark = pytest.mark.django_db

provider = LocalPaymentProvider()
NOW = timedelta(0)  # list every movement, however young (the default leaves the last minutes out)


def post(kind: str, ref: str, lines, *, currency="usd") -> None:
    ledger.ledger_post(
        kind=kind,
        source=f"test:{ref}",
        key=f"{kind}:{ref}:{uuid.uuid4()}",
        currency=currency,
        lines=[(account, Decimal(amount)) for account, amount in lines],
        provider_ref=ref,
    )


def captured(payment_id: str, amount="150.00") -> None:
    post(
        "captured",
        payment_id,
        [(ledger.CAPTURED, amount), (ledger.HELD, f"-{amount}"), (ledger.CASH, amount), (ledger.OUTSIDE, f"-{amount}")],
    )


def seller() -> tuple[object, str]:
    """A seller with an active local payout account: (the user, the account's id)."""
    user = UserFactory()
    account_id = active_account()
    PayoutAccount.objects.create(
        owner=user, provider="local", provider_account_id=account_id, status="active", payouts_enabled=True
    )
    return user, account_id


@pytest.fixture
def paid_out():
    """A task paid (150), its seller's payout of 135 made as one transfer and one payout, all booked."""
    payment_id = paid()
    captured(payment_id)
    user, account_id = seller()
    sent = transfer(account_id)
    post("transfer", sent.id, [(ledger.connected(user.pk), "135.00"), (ledger.CASH, "-135.00")])
    made = payout(account_id)
    post("payout", made.id, [(ledger.OUTSIDE, "135.00"), (ledger.connected(user.pk), "-135.00")])
    return payment_id, user, account_id, made


def test_books_that_match_the_provider_show_no_difference(paid_out):
    top_up = paid(amount="20.00", task="")  # a credit top-up: the platform's money, not the ledger's

    assert reconcile(grace=NOW) == []
    assert provider.balance() == {"usd": Decimal("35.00")}  # 15 booked as cash + 20 the ledger never tracks
    assert top_up


def test_a_refund_made_in_the_dashboard_shows_as_a_movement_not_in_the_books(paid_out):
    payment_id, *_ = paid_out
    provider.simulate_dashboard_refund(payment_id, Decimal("10.00"))

    differences = reconcile(grace=NOW)

    [missing, cash] = differences
    assert (missing.kind, missing.account, missing.provider) == ("not_in_books", ledger.CASH, Decimal("-10.00"))
    assert missing.ref.startswith("re_") and "refund" in missing.detail
    assert (cash.kind, cash.account, cash.ledger, cash.provider) == (
        "balance",
        ledger.CASH,
        Decimal("15.00"),
        Decimal("5.00"),
    )


def test_an_entry_the_provider_does_not_know_and_an_entry_naming_nothing_are_listed(paid_out):
    _, user, _, _ = paid_out
    post("transfer", "tr_neverMade", [(ledger.connected(user.pk), "5.00"), (ledger.CASH, "-5.00")])
    post(
        "captured",
        "",
        [(ledger.CAPTURED, "1.00"), (ledger.HELD, "-1.00"), (ledger.CASH, "1.00"), (ledger.OUTSIDE, "-1.00")],
    )

    found = {(d.kind, d.account, d.ref) for d in reconcile(grace=NOW)}

    entry = LedgerEntry.objects.get(provider_ref="", kind="captured")
    assert found == {
        ("unknown_to_provider", ledger.connected(user.pk), "tr_neverMade"),
        ("no_provider_object", ledger.CASH, f"entry #{entry.pk}"),
        ("balance", ledger.CASH, ""),
        ("balance", ledger.connected(user.pk), PayoutAccount.objects.get(owner=user).provider_account_id),
    }


def test_a_payout_that_failed_after_paid_matches_once_its_return_is_booked(paid_out):
    _, user, _, made = paid_out
    provider.simulate_payout_failure(made.id)

    [difference] = reconcile(grace=NOW)
    assert (difference.kind, difference.account) == ("balance", ledger.connected(user.pk))
    assert (difference.ledger, difference.provider) == (Decimal("0.00"), Decimal("135.00"))

    post("payout_failed", made.id, [(ledger.connected(user.pk), "135.00"), (ledger.OUTSIDE, "-135.00")])
    assert reconcile(grace=NOW) == []


def test_a_dispute_matches_when_the_withdrawal_with_its_fee_is_booked(paid_out, settings):
    settings.PAYMENTS_LOCAL_DISPUTE_FEE = "15.00"
    payment_id, *_ = paid_out
    dispute_id, _ = provider.simulate_dispute(payment_id, "needs_response")

    found = reconcile(grace=NOW)
    assert {(d.kind, d.ref) for d in found} == {("not_in_books", dispute_id), ("balance", "")}

    post("dispute_withdrawn", dispute_id, [(ledger.OUTSIDE, "165.00"), (ledger.CASH, "-165.00")])
    assert reconcile(grace=NOW) == []
    provider.simulate_dispute(payment_id, "won")
    post("dispute_reinstated", dispute_id, [(ledger.CASH, "150.00"), (ledger.OUTSIDE, "-150.00")])
    assert reconcile(grace=NOW) == []


def test_a_currency_only_one_side_has_is_a_difference():
    payment_id = paid(amount="5000", currency="jpy")

    [difference] = [d for d in reconcile(grace=NOW) if d.kind == "balance"]

    assert (difference.currency, difference.ledger, difference.provider) == ("jpy", Decimal(0), Decimal("5000"))
    captured_jpy = [(ledger.CAPTURED, "5000"), (ledger.HELD, "-5000"), (ledger.CASH, "5000"), (ledger.OUTSIDE, "-5000")]
    post("captured", payment_id, captured_jpy, currency="jpy")
    assert reconcile(grace=NOW) == []


def test_young_movements_are_not_listed_one_by_one_but_balances_still_compare(paid_out):
    payment_id, *_ = paid_out
    provider.simulate_dashboard_refund(payment_id, Decimal("10.00"))

    assert [d.kind for d in reconcile()] == ["balance"]  # the refund may still be on its way to the books


def test_since_lists_only_newer_movements_and_leaves_the_platforms_balance_to_the_full_run(paid_out):
    payment_id, user, account_id, _ = paid_out
    provider.simulate_dashboard_refund(payment_id, Decimal("10.00"))
    later = timezone.now()

    assert reconcile(since=later, grace=NOW) == []  # nothing newer; the platform's total needs the full run
    post("transfer", "tr_late", [(ledger.connected(user.pk), "1.00"), (ledger.CASH, "-1.00")])
    found = reconcile(since=later, grace=NOW)
    assert {(d.kind, d.ref) for d in found} == {("unknown_to_provider", "tr_late"), ("balance", account_id)}


def test_the_command_prints_progress_and_each_difference_and_exits_1(paid_out, capsys, settings):
    call_command("payments_reconcile")
    out = capsys.readouterr().out
    assert "platform:cash (platform): 2 provider movement(s) read." in out
    assert "The books match the provider." in out

    _, user, _, _ = paid_out
    post("transfer", "tr_neverMade", [(ledger.connected(user.pk), "5.00"), (ledger.CASH, "-5.00")])
    with pytest.raises(SystemExit) as exited:
        call_command("payments_reconcile")
    assert exited.value.code == 1
    captured_out = capsys.readouterr()
    assert "DIFFERENCE balance platform:cash" in captured_out.out
    assert "difference(s) between the books and the provider" in captured_out.err


def test_the_daily_job_logs_each_difference_at_error(paid_out, caplog):
    _, user, _, _ = paid_out
    post("transfer", "tr_neverMade", [(ledger.connected(user.pk), "5.00"), (ledger.CASH, "-5.00")])

    with caplog.at_level(logging.INFO, logger="payments.reconcile"):
        assert reconcile_and_alert() == 2  # the two balances; the young entry waits for the next run

    errors = [r.getMessage() for r in caplog.records if r.levelno == logging.ERROR]
    assert len(errors) == 2 and all(m.startswith("reconciliation: balance ") for m in errors)


def test_a_difference_reads_as_one_line():
    difference = Difference(
        kind="balance", account=ledger.CASH, currency="usd", ledger=Decimal("1.00"), provider=Decimal("2.00")
    )
    assert str(difference) == "balance platform:cash: books 1.00 vs provider 2.00 USD"
