"""The provider's events in every order it can send them (docs/payouts.md#events), signed, through the
real inbound endpoint (`POST /api/v1/webhooks/payments`): a card dispute's lifecycle and a payout's, each
event then again (the provider's retry, and a copy under a new id), end in the same books.

The provider acts first, in its own order (its objects change, its events are stamped `created` in that
order); then its events arrive in one of every permutation. Afterwards the payout run pays what is owed,
and the books must hold (tests/payments/payouts/money_driver.py, `MoneyDriver.problems`): ledger_check and
reconciliation pass, every earning's state matches its transfer, the ledger's money accounts equal the
provider's balances, and each seller keeps exactly the part of its sales that was neither refunded nor
lost: money paid out to a bank that the platform cannot take back stays booked as the seller's debt, and
a connected balance holding money of a seller in debt is recovered.
"""

from __future__ import annotations

from collections.abc import Callable
from decimal import Decimal

import pytest
from django.core.cache import cache
from django.db import transaction

from tests.payments.payouts.money_driver import NET, Base, MoneyDriver, make_base, orders

pytestmark = pytest.mark.django_db


@pytest.fixture
def hold_zero(settings):
    """No holding period: what is released is paid by the next run (the local profile's setting)."""
    settings.EARNING_HOLD_DAYS = 0
    settings.PAYOUT_SETTLEMENT_DELAY_SECONDS = 0


@pytest.fixture
def base(hold_zero, alice_api, staff_api, api, seller, seller_api) -> Base:
    """One seller, two sales in review: the first meets the events, the second is a later sale."""
    return make_base(
        poster_api=alice_api, staff_api=staff_api, api=api, seller=seller, seller_api=seller_api, deals_per_seller=(2,)
    )


def every_case(base: Base, cases: list, run: Callable[[MoneyDriver, object], Decimal]) -> None:
    """`run` each case on the same base (each in a savepoint rolled back afterwards, so every case starts
    from the deals in review); `run` answers what the seller must keep. Fails listing every case whose books
    do not hold, with its steps and the inbound endpoint's answers."""
    failures = []
    for case in cases:
        cache.clear()  # the endpoint's rate limits
        with transaction.atomic():
            driver = MoneyDriver(base)
            try:
                keeps = run(driver, case)
                problems = driver.problems(settled=True)
                kept = driver.received(0) - driver.debt(0)
                if kept != keeps:
                    problems.append(f"seller 0 kept {kept} (received less debt), not {keeps}")
                if connected := driver.connected_balance(0):
                    problems.append(f"seller 0: {connected} left in the connected account after the run")
            except AssertionError as exc:
                problems = [f"a step failed: {exc}"]
            if problems:
                story = [*driver.log, *(f"{label} -> {outcome}" for label, outcome in driver.outcomes)]
                failures.append(
                    f"{case_id(case)}:\n    " + "\n    ".join(problems) + "\n      " + "\n      ".join(story)
                )
            transaction.set_rollback(True)
    if failures:
        pytest.fail(f"{len(failures)} of {len(cases)} cases break the books:\n" + "\n".join(failures), pytrace=False)


def case_id(case) -> str:
    return "-".join("".join(map(str, part)) if isinstance(part, tuple) else str(part) for part in case)


# --- A card dispute's lifecycle ---------------------------------------------------------------------------

# How it opens and how it closes: the events the provider sends, in the order it makes them.
LIFECYCLES = {
    "lost": ({}, "lost"),  # created, funds_withdrawn, closed(lost)
    "won": ({}, "won"),  # created, funds_withdrawn, closed(won), funds_reinstated
    "inquiry": ({"inquiry": True}, "warning_closed"),  # created(warning_needs_response), closed(warning_closed)
    "prevented": ({"inquiry": True}, "prevented"),  # created, closed(prevented): not lost, nothing withdrawn
}
SIZES = {"lost": 3, "won": 4, "inquiry": 2, "prevented": 2}


def dispute_events(driver: MoneyDriver, lifecycle: str, deal: int = 0):
    opening, closing = LIFECYCLES[lifecycle]
    events = driver.dispute_open(deal, **opening) + driver.dispute_close(deal, closing)
    assert len(events) == SIZES[lifecycle], [e.label() for e in events]
    return events


def assert_accepted(driver: MoneyDriver) -> None:
    """No authentic event failed in its handler (500) or was refused: each was applied or known."""
    lost = [
        (label, outcome) for label, outcome in driver.outcomes if outcome.startswith("http") or outcome == "rejected"
    ]
    assert not lost, f"events not applied: {lost}"


@pytest.mark.parametrize("context", ["released", "paid_out", "refunded"])
@pytest.mark.parametrize("lifecycle", LIFECYCLES)
def test_a_card_dispute_in_any_order_leaves_the_same_books(base, lifecycle, context):
    """`context`: where the disputed sale stands when the events come (released; paid out; refunded by
    staff after release). Every order of the lifecycle's events, each then sent again twice."""

    def run(driver: MoneyDriver, case) -> Decimal:
        _, order = case
        assert driver.approve(0) == 200
        if context == "paid_out":
            driver.payouts_run()
        if context == "refunded":
            assert driver.refund_after_release(0) == "refunded"
        events = dispute_events(driver, lifecycle)
        driver.deliver_all([events[i] for i in order])
        driver.approve(1)  # a later sale: pays back a debt before anything more is paid out
        driver.payouts_run()
        assert_accepted(driver)
        return (Decimal(0) if lifecycle == "lost" or context == "refunded" else NET) + NET

    every_case(base, [(lifecycle, order) for order in orders(range(SIZES[lifecycle]))], run)


@pytest.mark.parametrize("lifecycle", LIFECYCLES)
def test_a_staff_refund_during_a_card_dispute_is_never_paid_to_the_seller(base, lifecycle):
    """Staff refund after release while a card dispute is open, at every point of every order of its events:
    the dispute's close must not give back what the refund took (a seller paid for a fully refunded task),
    nor a lost one take it twice. The provider may refuse to refund a charge whose funds a dispute took."""

    def run(driver: MoneyDriver, case) -> Decimal:
        _, order, position = case
        assert driver.approve(0) == 200
        events = dispute_events(driver, lifecycle)
        ordered = [events[i] for i in order]
        for event in ordered[:position]:
            driver.deliver(event)
        refunded = driver.refund_after_release(0)
        for event in ordered[position:]:
            driver.deliver(event)
        driver.deliver_all(ordered, duplicates=False)  # the provider's retries
        driver.approve(1)
        driver.payouts_run()
        assert refunded in ("refunded", "provider refused"), refunded
        assert_accepted(driver)
        return (Decimal(0) if lifecycle == "lost" or refunded == "refunded" else NET) + NET

    size = SIZES[lifecycle]
    # Every point of every order; of a withdrawn dispute's (the provider could refuse the refund then), the
    # refund after the first event and after the last.
    points = range(size + 1) if size == 2 else (1, size)
    cases = [(lifecycle, order, position) for order in orders(range(size)) for position in points]
    every_case(base, cases, run)


# --- A payout's lifecycle ---------------------------------------------------------------------------------


@pytest.mark.parametrize("failed", ["failed", "canceled"])
def test_a_payout_that_fails_after_it_was_paid_is_paid_again_once(base, failed):
    """`payout.paid`, then `payout.failed` (or `.canceled`): Stripe shows some failed payouts as paid first.
    In either order: the money is back in the connected account, and the next run pays it again from
    there, once, without a second transfer."""

    def run(driver: MoneyDriver, case) -> Decimal:
        _, order = case
        driver.approve(0)
        driver.payouts_run()
        events = driver.payout_events(0, failed=failed)
        driver.deliver_all([events[i] for i in order])
        driver.payouts_run()
        driver.payouts_run()  # twice: nothing more
        assert_accepted(driver)
        assert driver.banked(0) == NET, f"the seller's bank got {driver.banked(0)}, not {NET} once"
        assert driver.received(0) == NET, f"transferred {driver.received(0)}: a second transfer"
        return NET

    every_case(base, [(failed, order) for order in orders(range(2))], run)


@pytest.mark.parametrize("what", ["lost", "refund"])
def test_a_bounced_payout_and_a_lost_sale_in_any_order_recover_the_money(base, what):
    """The payout bounced and its money sits in the connected account; the card's owner wins a chargeback
    (`lost`: funds withdrawn, closed lost), or the poster is refunded in the dashboard (`refund`:
    `charge.refunded`). In any order: the seller's debt is recovered from that money, in money."""

    def run(driver: MoneyDriver, case) -> Decimal:
        _, order = case
        driver.approve(0)
        driver.payouts_run()
        paid, bounced = driver.payout_events(0, failed="failed")
        if what == "lost":
            driver.deliver_all([paid])  # already applied: our own create was answered `paid`
            events = [bounced, *dispute_events(driver, "lost")]
        else:
            events = [paid, bounced, *driver.dashboard_refund(0)]
        driver.deliver_all([events[i] for i in order])
        driver.payouts_run()
        assert_accepted(driver)
        assert driver.banked(0) == 0, f"{driver.banked(0)} of a lost sale reached the seller's bank"
        return Decimal(0)

    size = 4 if what == "lost" else 3
    every_case(base, [(what, order) for order in orders(range(size))], run)
