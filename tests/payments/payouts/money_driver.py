"""A driver of the money flow for the sequence tests (tests/payments/payouts/test_event_orders.py, test_sequences.py).

A few tasks paid on the local provider and delivered, sellers with active payout accounts; then the steps
that move money, each as a party, staff or the provider would take it:

- parties and staff: approve, dispute the delivery, resolve the dispute (refund_full / release_full /
  split, through the API), refund after release, the payout run;
- the provider: open and close a card dispute, refund in its dashboard, fail or cancel a payout that was
  paid. Each changes the provider's own state first (the local provider's `simulate_*` helpers where it has
  them) and answers the events it would send, stamped `created` in the order the provider made them;
  `deliver()` posts one, signed, through the real inbound endpoint, in whatever order the test chooses.

`problems()` reads the books against the provider and the deals' own story (what was refunded or lost at
the provider), so the invariants do not depend on how the money code records them today: see its
docstring. Only public behaviour is used: the API, the inbound endpoint, the service functions staff
call, the ledger's accounts, the local provider's own objects.
"""

from __future__ import annotations

import importlib
import itertools
import json
import time
from collections import defaultdict
from dataclasses import dataclass, field
from datetime import timedelta
from decimal import Decimal
from typing import Any

from django.db.models import Sum
from django.test import TestCase

from core.http.errors import InvalidState, ProviderError
from payments import ledger, signing
from payments.ledger_check import ledger_problems
from payments.models import Earning, LedgerLine, LocalConnectObject, LocalPayment
from payments.provider_events import SignedEvent, provider_id, signing_secret
from payments.providers.local import LocalPaymentProvider
from payments.services.payouts import payouts_run
from tests.conftest import client_with_token, jwt_for
from tests.payments.payouts.conftest import onboard
from tests.support.factories import UserFactory
from tests.tasks_market.conftest import selected_task, simulate_payment
from tests.tasks_market.factories import text_artefact

CURRENCY = "usd"
PRICE = Decimal("150.00")  # every deal's bid (tests.tasks_market.conftest.place_bid)
NET = Decimal("135.00")  # its seller's net at the default 10% fee
DISPUTE_FEE = Decimal("15.00")  # what a card network charges for a dispute, when the local provider has none
WEBHOOK = "/api/v1/webhooks/payments"
ACCEPTED = ("processed", "duplicate", "skipped", "ignored")  # answers to an authentic event that lose nothing
RESOLUTIONS = ("refund_full", "release_full", "split")
CLOSED = ("won", "lost", "warning_closed", "prevented")
ZERO = Decimal(0)


def _optional(module: str, name: str):
    """`module.name` when another part of the project has it yet, else None (the tests name what is missing)."""
    try:
        return getattr(importlib.import_module(module), name, None)
    except ImportError:
        return None


def refund_after_release_service():
    """Staff's refund after release: wherever the money app keeps it."""
    for module in ("payments.services.refunds", "payments.services.payments", "tasks_market.services.disputes"):
        if (found := _optional(module, "payment_refund_released")) is not None:
            return found
    raise LookupError("payment_refund_released is gone: update tests/payments/payouts/money_driver.py")


def reconcile_differences() -> list[str] | None:
    """The reconciliation's differences (payments.reconcile), or None while it does not exist."""
    reconcile = _optional("payments.reconcile", "reconcile")
    if reconcile is None:
        return None
    try:
        found = reconcile(grace=timedelta(0))  # every movement, however recent: nothing is in flight here
    except TypeError:
        found = reconcile()
    differences = getattr(found, "differences", found)
    return [str(d) for d in differences or []]


def committed():
    """Run what a step queues after its commit (the transfer, recovery and refund jobs; Celery is eager in
    tests) when the step ends, as production runs it at once: each example runs in a savepoint that never
    commits, so without this the jobs would wait for the next payout run's sweep."""
    return TestCase.captureOnCommitCallbacks(execute=True)


def minor(amount: Decimal) -> int:
    return int((Decimal(amount) * 100).to_integral_value())


def major(amount_minor: int) -> Decimal:
    return (Decimal(amount_minor) / 100).quantize(Decimal("0.01"))


# --- Events ---------------------------------------------------------------------------------------------


@dataclass
class Event:
    """One event the provider sends: its type, object, connected account, and when the provider made it."""

    type: str
    object: dict[str, Any]
    created: int
    account: str = ""
    id: str = field(default_factory=lambda: provider_id("evt"))

    def label(self) -> str:
        status = self.object.get("status")
        return f"{self.type}({status})" if self.type.startswith("charge.dispute.") and status else self.type

    def signed(self, *, event_id: str | None = None) -> SignedEvent:
        payload = {
            "id": event_id or self.id,
            "object": "event",
            "type": self.type,
            "created": self.created,
            "livemode": False,
            "data": {"object": self.object},
        }
        if self.account:
            payload["account"] = self.account
        body = json.dumps(payload, separators=(",", ":"), sort_keys=True).encode()
        header = signing.signature_header(body, [signing_secret()], int(time.time()))
        return SignedEvent(
            event_id=payload["id"],
            event_type=self.type,
            body=body,
            headers={"Content-Type": "application/json", signing.HEADER: header},
        )


def _events_of(answer: Any) -> list[SignedEvent]:
    """The signed events a local provider's `simulate_*` helper answered, in the order it made them."""
    if isinstance(answer, SignedEvent):
        return [answer]
    if isinstance(answer, list | tuple):
        return [event for part in answer for event in _events_of(part)]
    return []


# --- The deals ------------------------------------------------------------------------------------------


@dataclass
class Seller:
    user: Any
    api: Any
    account_id: str  # the connected account at the provider (acct_...)


@dataclass
class Deal:
    """One task, paid: what its seller may keep follows from what happened at the provider."""

    task_id: str
    payment_id: str  # pi_...
    seller: int
    dispute_id: str = ""  # the card dispute open or closed at the provider (one per charge)
    dispute_status: str = ""
    dispute_withdrawn: bool = False
    lost: bool = False


@dataclass
class Base:
    """What every example starts from: the parties, their clients, and the deals, all in review."""

    poster_api: Any
    staff_api: Any
    api: Any
    sellers: list[Seller]
    deals: list[Deal]


def make_base(*, poster_api, staff_api, api, seller, seller_api, deals_per_seller=(2, 1)) -> Base:
    """`len(deals_per_seller)` sellers with active payout accounts (the first is `seller`), each with that many
    tasks paid by the poster and delivered (in review)."""
    sellers = []
    for index in range(len(deals_per_seller)):
        user = seller if index == 0 else UserFactory(email=f"seller{index}@example.com")
        client = seller_api if index == 0 else client_with_token(jwt_for(user))
        sellers.append(Seller(user=user, api=client, account_id=onboard(user).provider_account_id))
    deals = []
    for index, count in enumerate(deals_per_seller):
        for _ in range(count):
            selected = selected_task(poster_api, sellers[index].api)
            payment_id = selected["payment"]["provider_payment_id"]
            paid = simulate_payment(api, payment_id)
            assert paid.status_code == 200 and paid.json()["status"] == "processed", paid.content
            task_id = selected["task"]["id"]
            submitted = sellers[index].api.post(
                f"/api/v1/tasks/{task_id}/delivery", {"artefacts": [text_artefact()], "notes": "v1"}, format="json"
            )
            assert submitted.status_code == 200, submitted.content
            deals.append(Deal(task_id=task_id, payment_id=payment_id, seller=index))
    return Base(poster_api=poster_api, staff_api=staff_api, api=api, sellers=sellers, deals=deals)


class MoneyDriver:
    """The steps, on a fresh copy of the base's deals (one driver per example: the DB state is rolled back)."""

    def __init__(self, base: Base, *, clock: int | None = None):
        self.base = base
        self.sellers = base.sellers
        self.deals = [Deal(task_id=d.task_id, payment_id=d.payment_id, seller=d.seller) for d in base.deals]
        self.clock = clock if clock is not None else int(time.time())
        self.log: list[str] = []  # every step taken, for the failure message
        self.outcomes: list[tuple[str, str]] = []  # (event label, inbound outcome)

    def _tick(self) -> int:
        self.clock += 1
        return self.clock

    # --- Parties and staff -------------------------------------------------------------------------------

    def approve(self, deal: int) -> int:
        self.log.append(f"approve({deal})")
        with committed():
            response = self.base.poster_api.post(f"/api/v1/tasks/{self.deals[deal].task_id}/delivery/approve")
        assert response.status_code in (200, 409), response.content
        return response.status_code

    def dispute_delivery(self, deal: int) -> int:
        self.log.append(f"dispute_delivery({deal})")
        with committed():
            response = self.base.poster_api.post(
                f"/api/v1/tasks/{self.deals[deal].task_id}/delivery/dispute",
                {"reason": "Not what we asked."},
                format="json",
            )
        assert response.status_code in (200, 409), response.content
        return response.status_code

    def resolve(self, deal: int, outcome: str, refund_amount: str = "50.00") -> int:
        self.log.append(f"resolve({deal}, {outcome!r}" + (f", {refund_amount})" if outcome == "split" else ")"))
        body = {"outcome": outcome, "note": "Decided by staff."}
        if outcome == "split":
            body["refund_amount"] = refund_amount
        with committed():
            response = self.base.staff_api.post(
                f"/api/v1/disputes/{self.deals[deal].task_id}/resolve", body, format="json"
            )
        # 502/503: the provider refused (e.g. a charge under dispute cannot be refunded): nothing applied.
        assert response.status_code in (200, 409, 502, 503), response.content
        return response.status_code

    def refund_after_release(self, deal: int) -> str:
        self.log.append(f"refund_after_release({deal})")
        try:
            with committed():
                refund_after_release_service()(task_id=self.deals[deal].task_id)
        except InvalidState:
            return "refused"
        except ProviderError:
            return "provider refused"
        return "refunded"

    def payouts_run(self) -> int:
        self.log.append("payouts_run()")
        with committed():
            return payouts_run()

    # --- The provider ------------------------------------------------------------------------------------

    def _payment_row(self, deal: int) -> LocalPayment:
        return LocalPayment.objects.get(id=self.deals[deal].payment_id)

    def can_open_dispute(self, deal: int) -> bool:
        """A card can be disputed once, and only when it was charged."""
        return not self.deals[deal].dispute_id

    def can_close_dispute(self, deal: int) -> bool:
        return bool(self.deals[deal].dispute_id) and self.deals[deal].dispute_status not in CLOSED

    def close_statuses(self, deal: int) -> tuple[str, ...]:
        """How the provider can close the deal's open dispute: an inquiry closes `warning_closed` (or is
        `prevented`); a chargeback, whose funds were withdrawn, is `won` or `lost`."""
        return ("won", "lost") if self.deals[deal].dispute_withdrawn else ("warning_closed", "prevented")

    def dispute_open(self, deal: int, *, inquiry: bool = False, withdraw: bool | None = None) -> list[Event]:
        """The card's owner disputes the charge: `charge.dispute.created`, and unless it is an inquiry (or
        `withdraw` is False: a dispute the network may still prevent) `charge.dispute.funds_withdrawn` (the
        amount and the dispute fee leave the platform's balance)."""
        withdraw = not inquiry if withdraw is None else withdraw
        self.log.append(f"provider: dispute_open({deal}, inquiry={inquiry}, withdraw={withdraw})")
        status = "warning_needs_response" if inquiry else "needs_response"
        state = self.deals[deal]
        simulated = self._simulate("simulate_dispute", state.payment_id, status)
        if simulated is not None:
            events = self._stamped(simulated)
            state.dispute_id = next((e.object["id"] for e in events if e.object.get("id")), "")
        else:
            state.dispute_id = provider_id("du")
            events = [self._dispute_event("charge.dispute.created", deal, status)]
            if withdraw:
                events.append(self._dispute_event("charge.dispute.funds_withdrawn", deal, status, withdrawn=True))
        state.dispute_status, state.dispute_withdrawn = status, withdraw
        return events

    def dispute_close(self, deal: int, status: str) -> list[Event]:
        """The dispute ends: `charge.dispute.closed` with `status`, and when it was won after its funds were
        withdrawn `charge.dispute.funds_reinstated`."""
        assert status in CLOSED, status
        self.log.append(f"provider: dispute_close({deal}, {status!r})")
        state = self.deals[deal]
        simulated = self._simulate("simulate_dispute", state.payment_id, status)
        if simulated is not None:
            events = self._stamped(simulated)
        else:
            events = [self._dispute_event("charge.dispute.closed", deal, status)]
            if status == "won" and state.dispute_withdrawn:
                events.append(self._dispute_event("charge.dispute.funds_reinstated", deal, status, reinstated=True))
        state.dispute_status, state.lost = status, status == "lost"
        return events

    def _dispute_event(
        self, event_type: str, deal: int, status: str, *, withdrawn: bool = False, reinstated: bool = False
    ) -> Event:
        """Stripe's dispute object, built by hand while the local provider cannot simulate disputes."""
        state, row = self.deals[deal], self._payment_row(deal)
        transactions = []
        if withdrawn:
            fee = minor(DISPUTE_FEE)
            transactions.append({"amount": -row.amount_minor, "fee": fee, "net": -row.amount_minor - fee})
        if reinstated:
            transactions.append({"amount": row.amount_minor, "fee": 0, "net": row.amount_minor})
        obj = {
            "id": state.dispute_id,
            "object": "dispute",
            "charge": f"ch_{row.id[3:]}",
            "payment_intent": row.id,
            "amount": row.amount_minor,
            "currency": row.currency,
            "reason": "fraudulent",
            "status": status,
            "is_charge_refundable": status.startswith("warning"),
            "balance_transactions": [
                {"id": provider_id("txn"), "object": "balance_transaction", "currency": row.currency, **t}
                for t in transactions
            ],
        }
        return Event(type=event_type, object=obj, created=self._tick())

    def can_refund_in_dashboard(self, deal: int) -> bool:
        """What is left of the charge, unless a dispute took its funds (the provider refuses that refund)."""
        row = self._payment_row(deal)
        return row.amount_refunded_minor < row.amount_minor and not self.deals[deal].dispute_withdrawn

    def dashboard_refund(self, deal: int, *, amount: Decimal | None = None) -> list[Event]:
        """Someone refunds in the provider's dashboard, not through us: `charge.refunded`."""
        self.log.append(f"provider: dashboard_refund({deal}, {amount or 'all'})")
        row = self._payment_row(deal)
        amount = amount if amount is not None else major(row.amount_minor - row.amount_refunded_minor)
        simulated = self._simulate("simulate_dashboard_refund", row.id, amount)
        if simulated is not None:
            return self._stamped(simulated)
        key = f"dashboard:{row.id}:{row.amount_refunded_minor}"
        LocalPaymentProvider().refund_payment_partially(payment_id=row.id, amount=amount, idempotency_key=key)
        row.refresh_from_db()
        refunds = LocalConnectObject.objects.filter(kind="refund", target_id=row.id, status="succeeded")
        obj = {
            "id": f"ch_{row.id[3:]}",
            "object": "charge",
            "payment_intent": row.id,
            "amount": row.amount_minor,
            "amount_captured": row.amount_minor,
            "amount_refunded": row.amount_refunded_minor,
            "refunded": row.amount_refunded_minor == row.amount_minor,
            "currency": row.currency,
            "status": "succeeded",
            "refunds": {
                "object": "list",
                "data": [
                    {
                        "id": r.id,
                        "object": "refund",
                        "amount": r.amount_minor,
                        "currency": r.currency,
                        "payment_intent": row.id,
                        "status": "succeeded",
                    }
                    for r in refunds.order_by("-created_at")
                ],
            },
        }
        return [Event(type="charge.refunded", object=obj, created=self._tick())]

    def paid_payout(self, seller: int) -> LocalConnectObject | None:
        """The seller's latest payout the provider shows as paid."""
        return (
            LocalConnectObject.objects.filter(kind="payout", account_id=self.sellers[seller].account_id, status="paid")
            .order_by("-created_at")
            .first()
        )

    def payout_events(self, seller: int, *, failed: str = "") -> list[Event]:
        """The provider's events of the seller's latest paid payout: `payout.paid`, then when `failed`
        ("failed" or "canceled") the bank sent it back (Stripe: a payout can show as paid, then fail)."""
        row = self.paid_payout(seller)
        assert row is not None, "no paid payout to fail"
        account = self.sellers[seller].account_id
        self.log.append(f"provider: payout_{failed or 'paid'}({seller})")
        events = [
            Event(type="payout.paid", object=self._payout_object(row, "paid"), created=self._tick(), account=account)
        ]
        if failed:
            simulated = self._simulate("simulate_payout_failure", row.id)
            if simulated is not None:
                returned = self._stamped(simulated, account=account)
                if failed == "canceled":  # the same money back, announced as Stripe does for a canceled one
                    for event in returned:
                        event.type = "payout.canceled"
                        event.object = event.object | {
                            "status": "canceled",
                            "failure_code": None,
                            "failure_message": None,
                        }
                return [events[0], *returned]
            LocalConnectObject.objects.filter(pk=row.pk).update(status=failed)
            obj = self._payout_object(row, failed) | {
                "failure_code": "account_closed" if failed == "failed" else None,
                "failure_message": "The bank account has been closed." if failed == "failed" else None,
            }
            events.append(Event(type=f"payout.{failed}", object=obj, created=self._tick(), account=account))
        return events

    @staticmethod
    def _payout_object(row: LocalConnectObject, status: str) -> dict[str, Any]:
        return {
            "id": row.id,
            "object": "payout",
            "amount": row.amount_minor,
            "currency": row.currency,
            "status": status,
            "method": "standard",
            "type": "bank_account",
            "metadata": dict(row.data.get("metadata", {})),
        }

    def _simulate(self, name: str, *args) -> Any:
        """The local provider's own simulation, when it has it (then the money really moved there)."""
        helper = getattr(LocalPaymentProvider(), name, None)
        return None if helper is None else helper(*args)

    def _stamped(self, answer: Any, *, account: str = "") -> list[Event]:
        """A simulate helper's signed events as Events, stamped in the order the provider made them."""
        events = []
        for signed_event in _events_of(answer):
            payload = signed_event.payload
            events.append(
                Event(
                    type=payload["type"],
                    object=payload["data"]["object"],
                    created=self._tick(),
                    account=payload.get("account") or account,
                    id=payload["id"],
                )
            )
        return events

    # --- Delivery ----------------------------------------------------------------------------------------

    def deliver(self, event: Event, *, fresh_id: bool = False) -> str:
        """POST the event, signed, to the inbound endpoint; the outcome (processed, duplicate, skipped ...)."""
        signed_event = event.signed(event_id=provider_id("evt") if fresh_id else None)
        self.log.append(f"deliver {event.label()}" + (" (new id)" if fresh_id else ""))
        with committed():
            response = self.base.api.post(
                WEBHOOK,
                data=signed_event.body,
                content_type="application/json",
                HTTP_PAYMENTS_SIGNATURE=signed_event.headers[signing.HEADER],
            )
        outcome = response.json().get("status", "") if response.status_code == 200 else f"http {response.status_code}"
        self.outcomes.append((event.label(), outcome))
        return outcome

    def deliver_all(self, events: list[Event], *, duplicates: bool = True) -> list[str]:
        """Each event, then each again as the provider's retry (the same id) and re-sent (a new id, the
        same object and time)."""
        outcomes = [self.deliver(e) for e in events]
        if duplicates:
            outcomes += [self.deliver(e) for e in events]
            outcomes += [self.deliver(e, fresh_id=True) for e in events]
        return outcomes

    # --- The books ---------------------------------------------------------------------------------------

    def received(self, seller: int) -> Decimal:
        """What the provider moved to the seller's connected account: transfers less their reversals."""
        rows = LocalConnectObject.objects.filter(kind="transfer", account_id=self.sellers[seller].account_id)
        return major(sum(r.amount_minor - int(r.data.get("amount_reversed", 0)) for r in rows))

    def banked(self, seller: int) -> Decimal:
        """What left the seller's connected account for their bank and stayed there."""
        rows = LocalConnectObject.objects.filter(
            kind="payout", account_id=self.sellers[seller].account_id, status__in=("paid", "pending", "in_transit")
        )
        return major(sum(r.amount_minor for r in rows))

    def connected_balance(self, seller: int) -> Decimal:
        """The seller's connected balance at the provider (its own `balance()` when it has one)."""
        provider = LocalPaymentProvider()
        if hasattr(provider, "balance"):
            return Decimal(provider.balance(account_id=self.sellers[seller].account_id).get(CURRENCY, ZERO))
        return self.received(seller) - self.banked(seller)

    def platform_balance(self) -> Decimal | None:
        provider = LocalPaymentProvider()
        if hasattr(provider, "balance"):
            return Decimal(provider.balance().get(CURRENCY, ZERO))
        return None

    def claims(self, seller: int) -> dict[str, Decimal]:
        """The seller's claims in the ledger, as positive amounts owed to them."""
        owner = str(self.sellers[seller].user.pk)
        rows = LedgerLine.objects.filter(owner_id=owner, currency=CURRENCY).values("account").annotate(t=Sum("amount"))
        found = defaultdict(lambda: ZERO, {row["account"].rsplit(":", 1)[1]: -row["t"] for row in rows})
        return found

    def debt(self, seller: int) -> Decimal:
        """What the seller owes the platform (a negative available balance)."""
        return max(ZERO, -self.claims(seller)["available"])

    def fair_share(self, seller: int) -> Decimal:
        """At most what the seller may keep: per deal, the charge less what was refunded at the provider,
        nothing of a lost dispute (gross: the fee only lowers it)."""
        total = ZERO
        for index, deal in enumerate(self.deals):
            if deal.seller == seller and not deal.lost:
                row = self._payment_row(index)
                total += major(row.amount_minor - row.amount_refunded_minor)
        return total

    def problems(self, *, settled: bool) -> list[str]:
        """Every broken invariant, one line each ([] when the books are right).

        Always: the money group balances (what came in from outside = the platform's balance + every
        connected balance); no connected balance at the provider is negative; `ledger_check` passes; every
        earning's state matches its transfer and payout.

        `settled` (no event of the provider still on its way): the ledger's money accounts equal the
        provider's balances, reconciliation passes, no seller keeps money for an amount refunded or lost at
        the provider (unless the platform books it as the seller's debt and no money of theirs sits
        unrecovered in their connected account), and money in a connected account is owed to its seller."""
        found = [f"ledger_check: {p}" for p in ledger_problems()]
        found += self._money_group_problems()
        found += self._earning_problems()
        for index, seller in enumerate(self.sellers):
            connected = self.connected_balance(index)
            if connected < 0:
                found.append(f"seller {index}: the connected balance at the provider is {connected}")
            if not settled:
                continue
            booked = self._money_line(ledger.connected(seller.user.pk))
            if booked != connected:
                found.append(f"seller {index}: the ledger's connected balance {booked} != the provider's {connected}")
            debt, kept = self.debt(index), self.received(index)
            if kept - debt > self.fair_share(index):
                found.append(
                    f"seller {index}: paid for a refunded or lost amount: received {kept} (debt booked {debt}), "
                    f"but only {self.fair_share(index)} of its charges was neither refunded nor lost"
                )
            claims = self.claims(index)  # frozen: a failed payout's money an open chargeback holds back
            owed = max(ZERO, claims["available"] + claims["frozen"]) + self._pending_payouts(index)
            if connected > owed:
                found.append(
                    f"seller {index}: {connected} sits in the connected account but only {owed} is owed to the "
                    f"seller (available {claims['available']}, frozen {claims['frozen']}, debt {debt}): money "
                    "stranded or not recovered"
                )
        if settled:
            differences = reconcile_differences()
            found += [f"reconcile: {d}" for d in differences or []]
            platform, cash = self.platform_balance(), self._money_line(ledger.CASH)
            if differences is None and platform is not None and platform != cash:
                found.append(f"platform: the ledger's cash {cash} != the provider's balance {platform}")
        return found

    def _money_line(self, account: str) -> Decimal:
        total = LedgerLine.objects.filter(account=account, currency=CURRENCY).aggregate(t=Sum("amount"))["t"]
        return total or ZERO

    def _money_group_problems(self) -> list[str]:
        rows = LedgerLine.objects.filter(currency=CURRENCY).values("account").annotate(t=Sum("amount"))
        money = {row["account"]: row["t"] for row in rows if ledger.is_money(row["account"])}
        came_in = -money.get(ledger.OUTSIDE, ZERO)
        held = sum((t for account, t in money.items() if account != ledger.OUTSIDE), ZERO)
        return [] if came_in == held else [f"money in {came_in} != cash + connected balances {held}"]

    def _pending_payouts(self, seller: int) -> Decimal:
        from payments.models import Payout

        total = Payout.objects.filter(owner=self.sellers[seller].user, status="pending").aggregate(t=Sum("amount"))
        return total["t"] or ZERO

    def _earning_problems(self) -> list[str]:
        """An earning paid out has a transfer the provider made to its owner's account and a live payout;
        one not paid out belongs to no payout."""
        accounts = {str(s.user.pk): s.account_id for s in self.sellers}
        found = []
        for earning in Earning.objects.select_related("payout"):
            name = f"earning of {earning.source} ({earning.status})"
            if earning.status == "paid_out":
                transfer = LocalConnectObject.objects.filter(kind="transfer", id=earning.transfer_id).first()
                if transfer is None:
                    found.append(f"{name}: paid out without a transfer at the provider ({earning.transfer_id!r})")
                elif transfer.account_id != accounts.get(str(earning.owner_id)):
                    found.append(f"{name}: its transfer {transfer.id} went to another account")
                if earning.payout is None or earning.payout.status not in ("pending", "paid"):
                    status = earning.payout.status if earning.payout else "none"
                    found.append(f"{name}: paid out, but its payout is {status}")
            elif earning.payout_id is not None:
                found.append(f"{name}: still in payout {earning.payout_id} ({earning.payout.status})")
        return found


def orders(events: list[Any]) -> list[tuple[Any, ...]]:
    """Every order of `events`."""
    return list(itertools.permutations(events))
