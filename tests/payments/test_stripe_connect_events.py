"""Stripe's Connect events in either order (docs/payouts.md#events): the local Stripe stand-in's signed events
(tests/support/stripe_server.py) posted through the real inbound endpoint, `POST /api/v1/webhooks/payments`,
before and after what they race with, end in the same state.

- `account.updated` (onboarding finished at Stripe) before or after the owner comes back and looks;
  an older `account.updated` delivered late does not roll the account back.
- `charge.dispute.created` (a card chargeback) before or after the poster's approval releases the task.
- `payout.paid` before or after our payout record knows Stripe's payout id (the event overtakes the
  create's answer).

And the money paths that meet Stripe's Connect calls: a payout (one transfer from the platform's balance in
the group `payout:<id>`, then one payout made as the connected account), a dispute split (a partial
refund; the net of the rest transferred by the payout), a refund after release (the charge refunded in
full, and what a failed payout left in the connected account taken back by a transfer reversal), and
payments held before capture-on-pay (captured by the beat; or cancelled by Stripe when the
authorisation lapsed: `payment_intent.canceled`).
"""

from __future__ import annotations

import time
from datetime import timedelta
from decimal import Decimal

import pytest
from django.utils import timezone

from core.http.errors import ProviderUnavailable
from payments.models import Earning, Payment, Payout, PayoutAccount
from payments.provider_events import SignedEvent
from payments.providers.stripe import StripePaymentProvider
from payments.services.earnings import earnings_settle
from payments.services.payments import held_payments_capture
from payments.services.payouts import payout_owner, payout_send
from tasks_market.models import DeliveryStatus, Task
from tasks_market.services.disputes import payment_refund_released
from tests.conftest import client_with_token, jwt_for
from tests.support.stripe_server import stored_intent, stripe_event, stripe_stand_in
from tests.tasks_market.conftest import Receiver, place_bid, post_task, register_agent
from tests.tasks_market.factories import delivering_task, text_artefact
from webhooks_app.models import InboundEvent

pytestmark = pytest.mark.django_db(transaction=True)  # the after-commit jobs (recovery, dispatch) run


@pytest.fixture
def stripe(settings):
    with stripe_stand_in(settings) as state:
        yield state


@pytest.fixture
def agent_server():
    receiver = Receiver()
    yield receiver
    receiver.close()


def post(api, event: SignedEvent) -> str:
    response = api.post(
        "/api/v1/webhooks/payments",
        data=event.body,
        content_type="application/json",
        HTTP_STRIPE_SIGNATURE=event.headers["Stripe-Signature"],
    )
    assert response.status_code == 200, response.content
    return response.json()["status"]


def start_onboarding(bob_api) -> str:
    started = bob_api.post("/api/v1/payouts/account", {}, format="json")
    assert started.status_code == 200, started.content
    assert started.json()["onboarding_url"].startswith("https://connect.stripe.test/setup/e/acct_")
    return PayoutAccount.objects.get().provider_account_id


def onboarded(api, bob_api, stripe) -> str:
    account_id = start_onboarding(bob_api)
    assert post(api, stripe.complete_onboarding(account_id, name="Copybot Ltd")) == "processed"
    return account_id


def in_review(api, alice_api, bob_api, stripe, agent_server) -> tuple[dict, str]:
    """A task Bob's agent won, Alice paid at Stripe (captured at once) and the agent delivered."""
    task = post_task(alice_api)
    agent = register_agent(bob_api, url=agent_server.url)
    bid = place_bid(bob_api, task["id"], agent["id"])
    selection = alice_api.post(f"/api/v1/tasks/{task['id']}/bids/{bid['id']}/select")
    assert selection.status_code == 200, selection.content
    intent_id, paid = stripe.pay_session(selection.json()["payment"]["provider_payment_id"])
    assert post(api, paid) == "processed"
    assert Task.objects.get(id=task["id"]).status == "delivering"
    [dispatch] = [b for b in agent_server.bodies() if b["type"] == "task.dispatched"]
    submitted = bob_api.post(
        dispatch["data"]["submit"]["path"], {"artefacts": [text_artefact()], "notes": "v1"}, format="json"
    )
    assert submitted.status_code == 200, submitted.content
    return task, intent_id


def approve(alice_api, task) -> None:
    response = alice_api.post(f"/api/v1/tasks/{task['id']}/delivery/approve")
    assert response.status_code == 200, response.content


def balance(bob_api) -> dict[str, Decimal]:
    [row] = bob_api.get("/api/v1/payouts/balance").json()["items"]
    return {k: Decimal(v) for k, v in row.items() if k != "currency"}


# --- account.updated -------------------------------------------------------------------------------


@pytest.mark.parametrize("order", ["event_first", "return_first"])
def test_onboarding_ends_active_whether_the_event_or_the_owner_comes_back_first(api, bob_api, stripe, order):
    account_id = start_onboarding(bob_api)
    earlier = stripe_event("account.updated", dict(stripe.accounts[account_id]), account=account_id, created=1)
    finished = stripe.complete_onboarding(account_id, name="Copybot Ltd")

    if order == "return_first":
        assert bob_api.get("/api/v1/payouts/account").json()["status"] == "onboarding"
    assert post(api, finished) == "processed"
    account = bob_api.get("/api/v1/payouts/account").json()
    assert post(api, earlier) == "ignored"  # an older state delivered late is skipped: it rolls nothing back

    after = bob_api.get("/api/v1/payouts/account").json()
    assert (after["status"], after["payouts_enabled"], after["display_name"]) == ("active", True, "Copybot Ltd")
    assert after == account


def test_a_new_account_is_onboarding_until_stripe_says_otherwise_then_restricted(api, bob_api, stripe):
    account_id = start_onboarding(bob_api)
    # Stripe announces a new account with everything past due: that is onboarding, not a restriction.
    fresh = stripe_event("account.updated", dict(stripe.accounts[account_id]), account=account_id)
    assert post(api, fresh) == "processed"
    assert bob_api.get("/api/v1/payouts/account").json()["status"] == "onboarding"

    now = int(time.time())  # the inbound cursor orders one object's events by Stripe's `created`
    assert post(api, stripe.complete_onboarding(account_id, created=now)) == "processed"
    assert post(api, stripe.restrict(account_id, created=now + 1)) == "processed"

    account = bob_api.get("/api/v1/payouts/account").json()
    assert (account["status"], account["payouts_enabled"]) == ("restricted", False)


# --- charge.dispute.created ------------------------------------------------------------------------


@pytest.mark.parametrize("order", ["chargeback_first", "release_first"])
def test_a_chargeback_freezes_the_sellers_earning_before_or_after_release(
    api, alice_api, bob_api, stripe, agent_server, order
):
    onboarded(api, bob_api, stripe)
    task, intent_id = in_review(api, alice_api, bob_api, stripe, agent_server)
    dispute_id, chargeback = stripe.open_dispute(intent_id)

    if order == "chargeback_first":
        assert post(api, chargeback) == "processed"
        approve(alice_api, task)
    else:
        approve(alice_api, task)
        assert post(api, chargeback) == "processed"

    earning = Earning.objects.get(source=f"task:{task['id']}")
    assert (earning.status, earning.chargeback_state, earning.chargeback_id) == ("frozen", "frozen", dispute_id)
    assert balance(bob_api)["frozen"] == Decimal("135")
    assert earnings_settle() == 0  # frozen money is not settled, so never paid out

    assert post(api, stripe.close_dispute(dispute_id, status="won")) == "processed"
    earning.refresh_from_db()
    assert (earning.status, earning.chargeback_state) == ("pending", "won")


# --- payout.paid ------------------------------------------------------------------------------------


def _available_payout(api, alice_api, bob_api, stripe, agent_server) -> tuple[str, Payout]:
    """A released task's earning claimed as a payout, nothing sent to Stripe yet: the release moves no
    money (the payout's transfer does)."""
    account_id = onboarded(api, bob_api, stripe)
    task, _ = in_review(api, alice_api, bob_api, stripe, agent_server)
    approve(alice_api, task)
    earning = Earning.objects.get(source=f"task:{task['id']}")
    assert (earning.transfer_id, stripe.posts("/v1/transfers")) == ("", [])  # no transfer at release
    earnings_settle()
    payout = payout_owner(owner_id=earning.owner_id, currency="usd")
    assert payout is not None and (payout.amount, payout.transfer_amount) == (Decimal("135"), Decimal("135"))
    return account_id, payout


def _answer_lost(monkeypatch) -> None:
    """Stripe makes the next payout, but its answer never reaches us (a read timeout)."""
    create = StripePaymentProvider.create_payout

    def made_then_lost(self, **kwargs):
        create(self, **kwargs)
        raise ProviderUnavailable("Stripe did not answer in time.")

    monkeypatch.setattr(StripePaymentProvider, "create_payout", made_then_lost)


def _sent_as_stripe_expects(stripe, account_id: str, payout: Payout) -> None:
    """One transfer from the platform's balance to the account, then one payout made as the account, each
    with the payout's key (a replay under the same key is the same request)."""
    transfers, payouts = stripe.posts("/v1/transfers"), stripe.posts("/v1/payouts")
    assert {(c.key, c.account, tuple(c.form)) for c in transfers} == {
        (
            f"payout:{payout.id}:transfer",
            None,
            (
                ("amount", "13500"),
                ("currency", "usd"),
                ("destination", account_id),
                ("transfer_group", f"payout:{payout.id}"),
                ("metadata[payout_id]", str(payout.id)),
            ),
        )
    }
    assert {(c.key, c.account, tuple(c.form)) for c in payouts} == {
        (
            f"payout:{payout.id}",
            account_id,
            (("amount", "13500"), ("currency", "usd"), ("metadata[payout_id]", str(payout.id))),
        )
    }
    assert (stripe.objects_created("/v1/transfers"), stripe.objects_created("/v1/payouts")) == (1, 1)
    assert (len(stripe.transfers), len(stripe.payouts)) == (1, 1)


@pytest.mark.parametrize("order", ["event_first", "record_first"])
def test_a_payout_is_paid_once_whether_the_event_or_our_record_comes_first(
    api, alice_api, bob_api, stripe, agent_server, monkeypatch, order
):
    account_id, payout = _available_payout(api, alice_api, bob_api, stripe, agent_server)

    if order == "record_first":
        assert payout_send(payout_id=payout.pk).provider_payout_id in stripe.payouts
        [po] = stripe.payouts
        assert post(api, stripe.settle_payout(po)) == "processed"
    else:
        # The transfer is made and recorded; Stripe makes the payout but its answer is lost, and Stripe's
        # event arrives before the next run asks again: the event binds the payout by its metadata.
        with monkeypatch.context() as patched:
            _answer_lost(patched)
            with pytest.raises(ProviderUnavailable):
                payout_send(payout_id=payout.pk)
        assert Payout.objects.values_list("transfer_id", "provider_payout_id").get(pk=payout.pk) == (
            next(iter(stripe.transfers)),
            "",
        )
        [po] = stripe.payouts
        assert post(api, stripe.settle_payout(po)) == "processed"
        payout_send(payout_id=payout.pk)  # the next run: nothing left to make
    payout_send(payout_id=payout.pk)  # and another: still nothing

    stored = Payout.objects.get(pk=payout.pk)
    [tr] = stripe.transfers
    assert (stored.status, stored.provider_payout_id, stored.transfer_id) == ("paid", po, tr)
    _sent_as_stripe_expects(stripe, account_id, stored)
    assert stripe.transfers[tr]["source_transaction"] is None  # out of the platform's balance
    assert stripe.balances[account_id] == {"usd": 0}  # transferred 135, paid out 135
    assert Earning.objects.values_list("status", "transfer_id").get() == ("paid_out", tr)
    assert balance(bob_api)["paid_out"] == Decimal("135")
    assert client_with_token(jwt_for(stored.owner)).get("/api/v1/payouts").json()["items"][0]["status"] == "paid"


LOOKUPS = ("/v1/transfers", "/v1/payouts")


@pytest.mark.parametrize("lost", ["transfer", "payout"])
def test_a_payout_retried_after_stripe_forgot_its_keys_looks_its_objects_up_instead_of_making_them_again(
    api, alice_api, bob_api, stripe, agent_server, monkeypatch, lost
):
    account_id, payout = _available_payout(api, alice_api, bob_api, stripe, agent_server)
    method = {"transfer": "create_transfer", "payout": "create_payout"}[lost]
    create = getattr(StripePaymentProvider, method)

    def made_then_lost(self, **kwargs):
        create(self, **kwargs)
        raise ProviderUnavailable("Stripe did not answer in time.")

    with monkeypatch.context() as patched:
        patched.setattr(StripePaymentProvider, method, made_then_lost)
        with pytest.raises(ProviderUnavailable):
            payout_send(payout_id=payout.pk)
    # A day later: Stripe has forgotten the keys, so a create under them would make a second object.
    Payout.objects.filter(pk=payout.pk).update(created_at=timezone.now() - timedelta(days=2))
    stripe.answers.clear()

    payout_send(payout_id=payout.pk)

    [tr] = stripe.transfers
    [po] = stripe.payouts
    stored = Payout.objects.get(pk=payout.pk)
    assert (stored.transfer_id, stored.provider_payout_id, stored.status) == (tr, po, "pending")
    reads = [(c.path, c.form, c.account) for c in stripe.calls if c.method == "GET" and c.path in LOOKUPS]
    transfer_read = ("/v1/transfers", [("transfer_group", f"payout:{payout.id}"), ("limit", "100")], None)
    payout_read = ("/v1/payouts", [("limit", "100")], account_id)  # as the connected account
    # A transfer recorded before needs no lookup; the payout is looked up either way.
    assert reads == ([transfer_read] if lost == "transfer" else []) + [payout_read]
    assert (len(stripe.posts("/v1/transfers")), len(stripe.posts("/v1/payouts"))) == (1, 1)
    assert stripe.balances[account_id] == {"usd": 0}
    assert post(api, stripe.settle_payout(po)) == "processed"
    assert Payout.objects.get(pk=payout.pk).status == "paid"


@pytest.mark.parametrize(
    ("order", "sent_by"),
    [("record_first", "acct_someone_else"), ("event_first", "acct_someone_else"), ("record_first", None)],
)
def test_a_payout_event_of_another_account_is_rejected_and_changes_nothing(
    api, alice_api, bob_api, stripe, agent_server, monkeypatch, order, sent_by
):
    account_id, payout = _available_payout(api, alice_api, bob_api, stripe, agent_server)
    if order == "record_first":
        payout_send(payout_id=payout.pk)
    else:  # not yet bound to Stripe's id: the forged event names our payout in its metadata
        with monkeypatch.context() as patched:
            _answer_lost(patched)
            with pytest.raises(ProviderUnavailable):
                payout_send(payout_id=payout.pk)
    [po] = stripe.payouts
    fields = ("status", "provider_payout_id", "transfer_id", "failure_reason")
    before = Payout.objects.values(*fields).get(pk=payout.pk)
    assert before["provider_payout_id"] == (po if order == "record_first" else "")
    earnings_before = list(Earning.objects.values("status", "payout_id", "transfer_id"))
    body = {k: v for k, v in stripe.payouts[po].items() if k != "_account"}
    forged = stripe_event("payout.failed", {**body, "status": "failed"}, account=sent_by)

    assert post(api, forged) == "rejected"

    event = InboundEvent.objects.get(event_id=forged.event_id)
    assert event.status == "rejected" and str(payout.id) in event.last_error
    assert Payout.objects.values(*fields).get(pk=payout.pk) == before
    assert list(Earning.objects.values("status", "payout_id", "transfer_id")) == earnings_before
    assert balance(bob_api)["paid_out"] == Decimal("135")  # the money is not given back to available
    assert post(api, stripe.settle_payout(po)) == "processed"  # the account's own event still settles it
    assert Payout.objects.values_list("status", "provider_payout_id").get(pk=payout.pk) == ("paid", po)
    _sent_as_stripe_expects(stripe, account_id, payout)


# --- A dispute split on Stripe ----------------------------------------------------------------------


def test_a_split_on_stripe_refunds_part_of_the_charge_and_transfers_the_net_of_the_rest(
    api, alice_api, bob_api, staff_api, stripe, agent_server
):
    account_id = onboarded(api, bob_api, stripe)
    task, intent_id = in_review(api, alice_api, bob_api, stripe, agent_server)
    disputed = alice_api.post(f"/api/v1/tasks/{task['id']}/delivery/dispute", {"reason": "Off brief."}, format="json")
    assert disputed.status_code == 200, disputed.content

    decision = {"outcome": "split", "refund_amount": "50.00", "note": "Half was off brief."}
    for _ in range(2):  # submitted twice: applied once
        resolved = staff_api.post(f"/api/v1/disputes/{task['id']}/resolve", decision, format="json")
        assert resolved.status_code == 200, resolved.content

    [refund] = stripe.posts("/v1/refunds")
    assert refund.key == f"dispute:{resolved.json()['id']}:refund"
    assert refund.form == [("payment_intent", intent_id), ("amount", "5000"), ("metadata[operation]", refund.key)]
    charge = stripe.charges[stripe.intents[intent_id]["latest_charge"]]
    assert (charge["amount_refunded"], charge["refunded"]) == (5000, False)
    assert stripe.intents[intent_id]["transfer_group"] == f"task:{task['id']}"
    earning = Earning.objects.get(source=f"task:{task['id']}")
    assert (earning.amount, earning.fee) == (Decimal("90"), Decimal("10"))  # 150 - 50 = 100, less the 10 % fee
    assert stripe.posts("/v1/transfers") == []  # the release moves nothing: the payout's transfer does

    earnings_settle()
    payout = payout_owner(owner_id=earning.owner_id, currency="usd")
    assert payout is not None
    payout_send(payout_id=payout.pk)

    [transfer] = stripe.posts("/v1/transfers")
    assert transfer.fields == {
        "amount": "9000",  # the seller's net of the part not refunded
        "currency": "usd",
        "destination": account_id,
        "transfer_group": f"payout:{payout.id}",
        "metadata[payout_id]": str(payout.id),
    }
    assert transfer.key == f"payout:{payout.id}:transfer"
    [sent] = stripe.posts("/v1/payouts")
    assert (sent.account, sent.key, sent.fields["amount"]) == (account_id, f"payout:{payout.id}", "9000")
    assert stripe.balances[account_id] == {"usd": 0}
    earning.refresh_from_db()
    assert (earning.status, earning.transfer_id) == ("paid_out", next(iter(stripe.transfers)))


def test_a_refund_after_release_on_stripe_reverses_the_transfer_then_refunds_the_charge(
    api, alice_api, bob_api, stripe, agent_server
):
    """The seller's payout failed, so its money sits in their connected account: a refund after release
    refunds the poster's charge in full and takes back what the account holds (a transfer reversal)."""
    account_id, payout = _available_payout(api, alice_api, bob_api, stripe, agent_server)
    intent_id = Payment.objects.get().provider_payment_id
    payout_send(payout_id=payout.pk)
    [po] = stripe.payouts
    assert post(api, stripe.settle_payout(po, paid=False)) == "processed"  # the bank sent it back
    assert Payout.objects.get(pk=payout.pk).status == "failed"
    assert stripe.balances[account_id] == {"usd": 13500}  # the failed payout's money is back in the account
    [transfer_id] = stripe.transfers
    task_id = Task.objects.get().pk

    for _ in range(2):  # staff ask twice: once at Stripe
        payment_refund_released(task_id=task_id)

    [refund] = stripe.posts("/v1/refunds")
    assert refund.key == f"refund-after-release:{Payment.objects.get().pk}"
    assert refund.form == [("payment_intent", intent_id), ("amount", "15000"), ("metadata[operation]", refund.key)]
    assert stripe.charges[stripe.intents[intent_id]["latest_charge"]]["refunded"] is True
    [reversal] = stripe.posts(f"/v1/transfers/{transfer_id}/reversals")
    assert reversal.form == [("amount", "13500"), ("expand[]", "transfer")]
    assert reversal.key.startswith("recovery:") and reversal.account is None
    assert (stripe.transfers[transfer_id]["amount_reversed"], stripe.transfers[transfer_id]["reversed"]) == (
        13500,
        True,
    )
    assert stripe.balances[account_id] == {"usd": 0}
    assert len(stripe.payouts) == 1  # nothing more was paid out
    earning = Earning.objects.get()
    assert (earning.status, earning.reversed_amount) == ("reversed", Decimal("135"))
    assert balance(bob_api)["available"] == Decimal("0")
    assert payout_owner(owner_id=earning.owner_id, currency="usd") is None  # owed nothing, holds nothing


# --- Payments held before capture-on-pay -------------------------------------------------------------


def _held_at_stripe(stripe, poster) -> tuple[Task, str]:
    """A task in review whose payment was authorised and held at Stripe (made before capture-on-pay)."""
    task, _ = delivering_task(poster=poster, delivery_status=DeliveryStatus.SUBMITTED)
    intent = stored_intent(stripe, {"amount": "15000", "currency": "usd", "capture_method": "manual"})
    stripe.pay(intent["id"])
    Payment.objects.filter(source=f"task:{task.pk}").update(
        provider="stripe", provider_payment_id=intent["id"], captured_at=None
    )
    return task, intent["id"]


def test_a_held_payment_is_captured_at_stripe_by_the_beat_before_it_expires(alice, alice_api, stripe):
    task, intent_id = _held_at_stripe(stripe, alice)
    Payment.objects.filter(source=f"task:{task.pk}").update(
        succeeded_at=timezone.now() - timedelta(days=4)
    )  # paid 4 days ago

    assert held_payments_capture() == 1

    assert [c.form for c in stripe.posts(f"/v1/payment_intents/{intent_id}/capture")] == [[]]
    assert stripe.intents[intent_id]["status"] == "succeeded"
    assert Payment.objects.get(source=f"task:{task.pk}").captured_at is not None
    response = alice_api.post(f"/api/v1/tasks/{task.id}/delivery/approve")
    assert response.status_code == 200, response.content
    assert Earning.objects.get(source=f"task:{task.id}").amount == Decimal("135")


def test_a_held_payment_whose_authorisation_lapsed_at_stripe_cannot_be_released(api, alice, alice_api, stripe):
    task, intent_id = _held_at_stripe(stripe, alice)

    assert post(api, stripe.expire_authorisation(intent_id)) == "processed"

    assert Payment.objects.get(source=f"task:{task.pk}").status == "cancelled"
    response = alice_api.post(f"/api/v1/tasks/{task.id}/delivery/approve")
    assert response.status_code == 409, response.content
    assert stripe.posts(f"/v1/payment_intents/{intent_id}/capture") == []
    assert not Earning.objects.exists()
