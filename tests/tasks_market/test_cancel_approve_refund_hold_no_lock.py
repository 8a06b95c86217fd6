"""Cancel, approve and refunds ask the payment provider with no transaction open and no row locked
(select has its own tests in test_select_calls_the_provider_outside_any_lock.py).

The Stripe adapter talks to a stand-in server (tests/support/stripe_server.py) that can hold its answer: while
it is held, the test takes the rows the operation will change with `SELECT ... FOR UPDATE NOWAIT`,
which fails at once if anybody holds them.
"""

from __future__ import annotations

import threading
from collections.abc import Callable
from datetime import timedelta

import pytest
from django.db import connection, transaction
from django.utils import timezone

from payments.models import Payment, PaymentStatus
from payments.services.payments import refunds_catch_up
from tasks_market.models import Delivery, DeliveryStatus, Task, TaskStatus
from tasks_market.services.disputes import payment_refund
from tests.conftest import client_with_token, jwt_for
from tests.support.stripe_server import stored_intent, stripe_stand_in
from tests.tasks_market.conftest import post_payment_event
from tests.tasks_market.factories import BidFactory, PaymentFactory, TaskFactory, delivering_task


@pytest.fixture
def stripe(settings):
    with stripe_stand_in(settings) as state:
        yield state


def _at_stripe(stripe, payment: Payment) -> str:
    """Make `payment` a Stripe PaymentIntent the stand-in knows; returns its id."""
    intent = stored_intent(stripe, {"amount": "15000", "currency": "usd"})
    Payment.objects.filter(pk=payment.pk).update(provider="stripe", provider_payment_id=intent["id"])
    return intent["id"]


def _awaiting_payment(stripe, **task_fields) -> tuple[Task, Payment, str]:
    task = TaskFactory(**task_fields)
    bid = BidFactory(task=task, status="selected")
    payment = PaymentFactory(bid=bid, task=task, status=PaymentStatus.REQUIRES_PAYMENT)
    Task.objects.filter(pk=task.pk).update(status=TaskStatus.AWAITING_PAYMENT, selected_bid=bid)
    return task, payment, _at_stripe(stripe, payment)


def _paid(stripe, delivery_status: str) -> tuple[Task, Delivery, Payment, str]:
    task, delivery = delivering_task(delivery_status=delivery_status)
    payment = Payment.objects.get(source=f"task:{task.pk}")
    return task, delivery, payment, _at_stripe(stripe, payment)


def _paid_for_a_cancelled_task(stripe) -> tuple[Task, Payment, str]:
    task = TaskFactory(status=TaskStatus.CANCELLED)
    payment = PaymentFactory(bid=BidFactory(task=task), task=task, status=PaymentStatus.CANCELLED)
    return task, payment, _at_stripe(stripe, payment)


def _nothing_locked(*rows) -> None:
    with transaction.atomic():
        for row in rows:
            type(row).objects.select_for_update(nowait=True).get(pk=row.pk)


def _while_stripe_holds(stripe, call: Callable[[], object], meanwhile: Callable[[], None]) -> object:
    """Run `call` in a thread; once its provider call reaches the stand-in, run `meanwhile`, then let
    the provider answer. Returns what `call` returned (or raised)."""
    stripe.hold, answer = threading.Event(), {}

    def run():
        try:
            answer["value"] = call()
        except Exception as exc:  # the test looks at it
            answer["value"] = exc
        finally:
            connection.close()

    thread = threading.Thread(target=run)
    thread.start()
    try:
        assert stripe.held.wait(10), "the provider was never asked"
        meanwhile()
    finally:
        stripe.hold.set()
    thread.join(30)
    return answer["value"]


@pytest.mark.django_db(transaction=True)
def test_cancel_holds_no_lock_while_the_provider_cancels_the_payment(stripe):
    task, payment, intent_id = _awaiting_payment(stripe)
    poster = client_with_token(jwt_for(task.poster))

    response = _while_stripe_holds(
        stripe, lambda: poster.post(f"/api/v1/tasks/{task.id}/cancel"), lambda: _nothing_locked(task, payment)
    )

    assert response.status_code == 200, response.content
    assert Task.objects.get(pk=task.pk).status == TaskStatus.CANCELLED
    assert Payment.objects.get(pk=payment.pk).status == PaymentStatus.CANCELLED
    assert stripe.intents[intent_id]["status"] == "canceled"


@pytest.mark.django_db
def test_a_cancel_whose_provider_call_went_through_before_can_be_repeated(stripe, alice):
    """The provider cancelled the payment but the record was lost (a crash, the database gone): the
    poster's next cancel is not refused by Stripe's "already canceled" and completes."""
    task, payment, intent_id = _awaiting_payment(stripe, poster=alice)
    stripe.intents[intent_id]["status"] = "canceled"

    response = client_with_token(jwt_for(alice)).post(f"/api/v1/tasks/{task.id}/cancel")

    assert response.status_code == 200, response.content
    assert Payment.objects.get(pk=payment.pk).status == PaymentStatus.CANCELLED


@pytest.mark.django_db(transaction=True)
def test_approve_claims_the_delivery_then_releases_with_no_lock_held(stripe):
    task, delivery, payment, intent_id = _paid(stripe, DeliveryStatus.SUBMITTED)
    poster = client_with_token(jwt_for(task.poster))

    def meanwhile():
        _nothing_locked(task, payment, delivery)
        # The claim is committed: a dispute meanwhile is refused at once, not after the provider call.
        assert Delivery.objects.get(pk=delivery.pk).status == DeliveryStatus.APPROVED
        dispute = poster.post(f"/api/v1/tasks/{task.id}/delivery/dispute", {"reason": "Too late to change my mind."})
        assert (dispute.status_code, dispute.json()["code"]) == (409, "invalid_state")

    response = _while_stripe_holds(stripe, lambda: poster.post(f"/api/v1/tasks/{task.id}/delivery/approve"), meanwhile)

    assert response.status_code == 200, response.content
    assert Task.objects.get(pk=task.pk).status == TaskStatus.COMPLETED
    assert Payment.objects.get(pk=payment.pk).status == PaymentStatus.RELEASED
    assert stripe.intents[intent_id]["status"] == "succeeded"  # captured


@pytest.mark.django_db
def test_a_provider_failure_on_approve_gives_the_delivery_back(stripe):
    task, delivery, payment, _ = _paid(stripe, DeliveryStatus.SUBMITTED)
    stripe.fail_next = [500]
    poster = client_with_token(jwt_for(task.poster))

    failed = poster.post(f"/api/v1/tasks/{task.id}/delivery/approve")

    assert (failed.status_code, failed.json()["code"]) == (502, "provider_error")
    assert Delivery.objects.get(pk=delivery.pk).status == DeliveryStatus.SUBMITTED
    assert Task.objects.get(pk=task.pk).status == TaskStatus.IN_REVIEW
    assert Payment.objects.get(pk=payment.pk).status == PaymentStatus.SUCCEEDED
    again = poster.post(f"/api/v1/tasks/{task.id}/delivery/approve")
    assert again.status_code == 200, again.content
    assert Task.objects.get(pk=task.pk).status == TaskStatus.COMPLETED


@pytest.mark.django_db
def test_an_approval_left_half_done_is_completed_by_the_next_approve(stripe):
    """The claim was written and the payment captured, then the request died: approving again completes it."""
    task, delivery, payment, intent_id = _paid(stripe, DeliveryStatus.SUBMITTED)
    Delivery.objects.filter(pk=delivery.pk).update(status=DeliveryStatus.APPROVED)
    stripe.intents[intent_id]["status"] = "succeeded"

    response = client_with_token(jwt_for(task.poster)).post(f"/api/v1/tasks/{task.id}/delivery/approve")

    assert response.status_code == 200, response.content
    assert Task.objects.get(pk=task.pk).status == TaskStatus.COMPLETED
    assert Payment.objects.get(pk=payment.pk).status == PaymentStatus.RELEASED


@pytest.mark.django_db(transaction=True)
def test_a_staff_refund_holds_no_lock_while_the_provider_refunds(stripe):
    task, _, payment, intent_id = _paid(stripe, DeliveryStatus.DISPUTED)

    answer = _while_stripe_holds(
        stripe, lambda: payment_refund(payment_id=payment.id), lambda: _nothing_locked(task, payment)
    )

    assert not isinstance(answer, Exception), answer
    assert Payment.objects.get(pk=payment.pk).status == PaymentStatus.REFUNDED
    assert stripe.keys("/v1/refunds") == [f"refund:{intent_id}"]


@pytest.mark.django_db(transaction=True)
def test_money_nothing_waits_for_is_refunded_after_the_event_commits_with_no_lock_held(stripe, api):
    """A success for a cancelled task: the webhook's transaction marks the refund due and commits; the
    refund (here in the same process: Celery runs eagerly in tests) asks the provider afterwards."""
    task, payment, intent_id = _paid_for_a_cancelled_task(stripe)

    def meanwhile():
        _nothing_locked(task, payment)
        assert Payment.objects.get(pk=payment.pk).refund_due_at is not None  # committed before the call

    response = _while_stripe_holds(
        stripe, lambda: post_payment_event(api, "payment_intent.succeeded", intent_id), meanwhile
    )

    assert response.status_code == 200, response.content
    refunded = Payment.objects.get(pk=payment.pk)
    assert (refunded.status, refunded.refund_due_at) == (PaymentStatus.REFUNDED, None)
    assert stripe.keys("/v1/refunds") == [f"refund:{intent_id}"]


@pytest.mark.django_db
def test_a_refund_whose_job_was_lost_is_made_by_the_sweep(stripe):
    _, payment, intent_id = _paid_for_a_cancelled_task(stripe)
    Payment.objects.filter(pk=payment.pk).update(refund_due_at=timezone.now() - timedelta(minutes=10))
    stripe.fail_next = [429]  # the first sweep cannot get through to Stripe: the refund stays due

    assert refunds_catch_up() == 1
    assert Payment.objects.get(pk=payment.pk).refund_due_at is not None
    assert refunds_catch_up() == 1
    refunded = Payment.objects.get(pk=payment.pk)
    assert (refunded.status, refunded.refund_due_at) == (PaymentStatus.REFUNDED, None)
    assert stripe.keys("/v1/refunds") == [f"refund:{intent_id}"] * 2  # the same key: one refund at Stripe
    assert refunds_catch_up() == 0
