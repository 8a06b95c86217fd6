"""Random sequences of provider events and staff actions over a few tasks keep the books right
(docs/payouts.md): a hypothesis state machine over tests/payments/payouts/money_driver.py.

Two sellers, three tasks paid on the local provider and delivered. The rules are every step the driver
knows, in any order: the poster approves or disputes a delivery, staff resolve a dispute (refund in full,
release in full, split) or refund after release, the payout run; the provider opens and closes card
disputes (won, lost, warning_closed, prevented), refunds in its dashboard, fails or cancels a payout it
showed as paid. The provider's events are posted signed through the inbound endpoint at once, or held back
and delivered later in any order, and sent again (the provider's retry, or a copy under a new id).

After every step (MoneyDriver.problems): the money group balances (money in = money out + held), no
connected balance is negative, ledger_check passes, every earning's transfer matches its state; and when
no event is still on its way: the ledger's money accounts equal the provider's balances, reconciliation
passes, no seller is paid for an amount refunded or lost at the provider, and money in a connected
account is owed to its seller (a debt is recovered from it).

Each example starts from the same deals in review: it runs in a savepoint of the test's transaction,
rolled back in `teardown`, so an example costs only its steps.

`make test` runs the same 30 examples every time (derandomized: a red CI is a change's, never the dice's).
A deeper search on demand, new examples each run:

    MONEY_SEQUENCES_EXAMPLES=500 MONEY_SEQUENCES_RANDOM=1 .venv/bin/python scripts/testenv.py -- \
        .venv/bin/python -m pytest tests/payments/payouts/test_sequences.py
"""

from __future__ import annotations

import os
from decimal import Decimal

import pytest
from django.core.cache import cache
from django.db import transaction
from hypothesis import HealthCheck, settings
from hypothesis import strategies as st
from hypothesis.stateful import RuleBasedStateMachine, invariant, precondition, rule, run_state_machine_as_test

from tests.payments.payouts.money_driver import RESOLUTIONS, Base, Event, MoneyDriver, make_base

pytestmark = pytest.mark.django_db

SEQUENCES = settings(
    max_examples=int(os.environ.get("MONEY_SEQUENCES_EXAMPLES", "30")),
    derandomize=os.environ.get("MONEY_SEQUENCES_RANDOM") != "1",
    stateful_step_count=12,
    deadline=None,
    database=None,  # nothing written to the work tree; a failure prints its steps
    report_multiple_bugs=False,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.filter_too_much],
)


@pytest.fixture
def base(settings, alice_api, staff_api, api, seller, seller_api) -> Base:
    """Two sellers (two tasks and one), no holding period: what is released is paid by the next run."""
    settings.EARNING_HOLD_DAYS = 0
    settings.PAYOUT_SETTLEMENT_DELAY_SECONDS = 0
    return make_base(
        poster_api=alice_api,
        staff_api=staff_api,
        api=api,
        seller=seller,
        seller_api=seller_api,
        deals_per_seller=(2, 1),
    )


class MoneySequences(RuleBasedStateMachine):
    base: Base  # set by the test

    def __init__(self):
        super().__init__()
        cache.clear()  # the endpoints' rate limits
        self._savepoint = transaction.atomic()
        self._savepoint.__enter__()
        self.driver = MoneyDriver(self.base)
        self.outbox: list[Event] = []  # made by the provider, not delivered yet
        self.sent: list[Event] = []

    def teardown(self):
        transaction.set_rollback(True)
        self._savepoint.__exit__(None, None, None)

    def _send(self, events: list[Event], hold: bool) -> None:
        if hold:
            self.outbox += events
            return
        for event in events:
            self.driver.deliver(event)
            self.sent.append(event)

    def _deals(self, eligible) -> list[int]:
        return [index for index in range(len(self.driver.deals)) if eligible(index)]

    # --- Parties and staff -------------------------------------------------------------------------------

    @rule(deal=st.integers(0, 2))
    def approve(self, deal):
        self.driver.approve(deal)

    @rule(deal=st.integers(0, 2))
    def dispute_delivery(self, deal):
        self.driver.dispute_delivery(deal)

    @rule(deal=st.integers(0, 2), outcome=st.sampled_from(RESOLUTIONS), refund=st.sampled_from(["0.01", "50.00"]))
    def resolve(self, deal, outcome, refund):
        self.driver.resolve(deal, outcome, refund)

    @rule(deal=st.integers(0, 2))
    def refund_after_release(self, deal):
        self.driver.refund_after_release(deal)

    @rule()
    def payouts_run(self):
        self.driver.payouts_run()

    # --- The provider ------------------------------------------------------------------------------------

    @precondition(lambda self: self._deals(self.driver.can_open_dispute))
    @rule(data=st.data(), inquiry=st.booleans(), hold=st.booleans())
    def dispute_open(self, data, inquiry, hold):
        deal = data.draw(st.sampled_from(self._deals(self.driver.can_open_dispute)), label="deal")
        self._send(self.driver.dispute_open(deal, inquiry=inquiry), hold)

    @precondition(lambda self: self._deals(self.driver.can_close_dispute))
    @rule(data=st.data(), hold=st.booleans())
    def dispute_close(self, data, hold):
        deal = data.draw(st.sampled_from(self._deals(self.driver.can_close_dispute)), label="deal")
        status = data.draw(st.sampled_from(self.driver.close_statuses(deal)), label="status")
        self._send(self.driver.dispute_close(deal, status), hold)

    @precondition(lambda self: self._deals(self.driver.can_refund_in_dashboard))
    @rule(data=st.data(), full=st.booleans(), hold=st.booleans())
    def dashboard_refund(self, data, full, hold):
        deal = data.draw(st.sampled_from(self._deals(self.driver.can_refund_in_dashboard)), label="deal")
        row = self.driver._payment_row(deal)
        left = row.amount_minor - row.amount_refunded_minor
        amount = None if full or left < 2000 else Decimal("20.00")
        self._send(self.driver.dashboard_refund(deal, amount=amount), hold)

    @precondition(lambda self: any(self.driver.paid_payout(s) for s in range(len(self.driver.sellers))))
    @rule(data=st.data(), canceled=st.booleans(), hold=st.booleans())
    def payout_fails(self, data, canceled, hold):
        sellers = [s for s in range(len(self.driver.sellers)) if self.driver.paid_payout(s)]
        seller = data.draw(st.sampled_from(sellers), label="seller")
        events = self.driver.payout_events(seller, failed="canceled" if canceled else "failed")
        self._send(events[1:], hold)  # payout.paid was our own create's answer

    @precondition(lambda self: self.outbox)
    @rule(data=st.data())
    def deliver_held(self, data):
        event = self.outbox.pop(data.draw(st.integers(0, len(self.outbox) - 1), label="held"))
        self.driver.deliver(event)
        self.sent.append(event)

    @precondition(lambda self: self.sent)
    @rule(data=st.data(), fresh_id=st.booleans())
    def deliver_again(self, data, fresh_id):
        self.driver.deliver(data.draw(st.sampled_from(self.sent), label="again"), fresh_id=fresh_id)

    # --- After every step --------------------------------------------------------------------------------

    @invariant()
    def books_hold(self):
        problems = self.driver.problems(settled=not self.outbox)
        lost = [f"{label} -> {outcome}" for label, outcome in self.driver.outcomes if outcome.startswith("http")]
        problems += [f"an event failed in its handler: {event}" for event in lost]
        story = "\n  ".join([*self.driver.log, *(f"{label} -> {outcome}" for label, outcome in self.driver.outcomes)])
        assert problems == [], f"\n  {story}"


def test_random_sequences_of_events_and_staff_actions_keep_the_books(base):
    MoneySequences.base = base
    run_state_machine_as_test(MoneySequences, settings=SEQUENCES)
