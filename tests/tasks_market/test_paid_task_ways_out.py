"""Every paid task has a way out (docs/decisions.md#cancelling-a-paid-task): the poster cancels an overdue
delivery, the seller gives the task up, staff refund a dispute as its resolution, and a held payment that
expired ends the task; each refund applies once."""

from __future__ import annotations

from datetime import timedelta
from decimal import Decimal

import pytest
from django.utils import timezone

from payments.ledger_check import ledger_problems
from payments.models import Earning, LedgerEntry, LocalPayment, Payment, PaymentStatus
from payments.providers.local import LocalPaymentProvider
from tasks_market.models import Bid, BidStatus, Delivery, DeliveryStatus, DisputeResolution, Task, TaskStatus
from tasks_market.services.deliveries import deliveries_release_due
from tasks_market.services.disputes import payment_refund
from tests.payments.payouts.conftest import (
    disputed,
    in_review,
    paid_task,
    payment_of,
    run_together,
    task_of,
)
from tests.tasks_market.factories import delivering_task


def overdue(task_id) -> None:
    """The task's deadline and the bid's eta both passed."""
    past = timezone.now() - timedelta(days=30)
    Task.objects.filter(pk=task_id).update(deadline=past)
    Payment.objects.filter(source=f"task:{task_id}").update(succeeded_at=past)


def refunded_once(task_id) -> None:
    payment = payment_of(task_id)
    assert (payment.status, payment.refunded_amount, payment.refund_due_at) == (
        PaymentStatus.REFUNDED,
        payment.amount,
        None,
    )
    assert LocalPayment.objects.get(id=payment.provider_payment_id).status == "refunded"
    assert LedgerEntry.objects.filter(kind="refunded", source=f"task:{task_id}").count() == 1
    assert not Earning.objects.filter(source=f"task:{task_id}").exists()
    assert task_of(task_id).status == TaskStatus.CANCELLED
    assert ledger_problems() == []


@pytest.mark.django_db
def test_the_poster_cancels_an_overdue_paid_task_and_is_refunded(alice_api, seller_api, api):
    task_id = paid_task(alice_api, seller_api, api)["task"]["id"]
    overdue(task_id)

    response = alice_api.post(f"/api/v1/tasks/{task_id}/cancel")

    assert response.status_code == 200, response.content
    assert response.json()["status"] == "cancelled"
    refunded_once(task_id)
    assert Delivery.objects.get(task_id=task_id).status == DeliveryStatus.CANCELLED
    again = alice_api.post(f"/api/v1/tasks/{task_id}/cancel")
    assert (again.status_code, again.json()["code"]) == (409, "invalid_state")
    refunded_once(task_id)


@pytest.mark.django_db
def test_before_the_delivery_is_due_the_poster_gets_409_and_nothing_moves(alice_api, seller_api, api):
    task_id = paid_task(alice_api, seller_api, api)["task"]["id"]
    # The task's own deadline passed, but the agent was paid just now and offered 24 hours.
    Task.objects.filter(pk=task_id).update(deadline=timezone.now() - timedelta(days=1))

    response = alice_api.post(f"/api/v1/tasks/{task_id}/cancel")

    assert (response.status_code, response.json()["code"]) == (409, "invalid_state")
    assert "withdrawing its bid" in response.json()["detail"]
    assert task_of(task_id).status == TaskStatus.DELIVERING
    assert payment_of(task_id).status == PaymentStatus.SUCCEEDED


@pytest.mark.django_db
def test_the_seller_gives_a_paid_task_up_and_the_poster_is_refunded(alice_api, seller_api, api):
    selected = paid_task(alice_api, seller_api, api)
    task_id, bid_id = selected["task"]["id"], selected["bid"]["id"]

    response = seller_api.post(f"/api/v1/tasks/{task_id}/bids/{bid_id}/withdraw")

    assert response.status_code == 200, response.content
    assert response.json()["status"] == "withdrawn"
    refunded_once(task_id)


@pytest.mark.django_db
def test_the_seller_may_give_up_handed_in_work_but_not_once_approved(alice_api, seller_api, api):
    first = in_review(alice_api, seller_api, api)
    second = in_review(alice_api, seller_api, api)
    assert alice_api.post(f"/api/v1/tasks/{second['task']['id']}/delivery/approve").status_code == 200

    given_up = seller_api.post(f"/api/v1/tasks/{first['task']['id']}/bids/{first['bid']['id']}/withdraw")
    too_late = seller_api.post(f"/api/v1/tasks/{second['task']['id']}/bids/{second['bid']['id']}/withdraw")

    assert given_up.status_code == 200, given_up.content
    refunded_once(first["task"]["id"])
    assert (too_late.status_code, too_late.json()["code"]) == (409, "invalid_state")
    assert payment_of(second["task"]["id"]).status == PaymentStatus.RELEASED


@pytest.mark.django_db
def test_an_admin_refund_of_a_disputed_task_is_its_full_refund_resolution(alice_api, seller_api, api, staff):
    task_id = disputed(alice_api, seller_api, api)["task"]["id"]

    payment_refund(payment_id=payment_of(task_id).pk, staff_user=staff)

    resolution = DisputeResolution.objects.get(task_id=task_id)
    assert (resolution.outcome, resolution.status, resolution.resolved_by) == ("refund_full", "applied", staff)
    refunded_once(task_id)


@pytest.mark.django_db
def test_a_held_payment_that_expired_ends_its_task_and_the_window_job_leaves_it(api, caplog):
    task, delivery = delivering_task(delivery_status=DeliveryStatus.SUBMITTED)
    payment = Payment.objects.get(source=f"task:{task.pk}")
    LocalPayment.objects.create(
        id=payment.provider_payment_id, amount_minor=15000, currency="usd", client_secret="s", status="succeeded"
    )
    Delivery.objects.filter(pk=delivery.pk).update(submitted_at=timezone.now() - timedelta(hours=80))
    _, event = LocalPaymentProvider().simulate_cancel(payment.provider_payment_id)

    response = api.post(
        "/api/v1/webhooks/payments",
        data=event.body,
        content_type="application/json",
        HTTP_PAYMENTS_SIGNATURE=event.headers["Payments-Signature"],
    )

    assert response.json()["status"] == "processed"
    assert Payment.objects.get(pk=payment.pk).status == PaymentStatus.CANCELLED
    assert Task.objects.get(pk=task.pk).status == TaskStatus.CANCELLED
    assert Delivery.objects.get(pk=delivery.pk).status == DeliveryStatus.CANCELLED
    assert "needs attention" in caplog.text
    assert deliveries_release_due() == 0  # not due any more: nothing to retry every 10 minutes
    assert not Earning.objects.exists()


# Races on PostgreSQL: each refund applies once, whichever side wins.


@pytest.mark.django_db(transaction=True)
def test_an_admin_refund_racing_a_release_resolution_applies_one_decision(alice_api, seller_api, api, staff_api, staff):
    for _ in range(3):  # either side may win each round
        task_id = disputed(alice_api, seller_api, api)["task"]["id"]
        payment_pk = payment_of(task_id).pk
        url = f"/api/v1/disputes/{task_id}/resolve"

        refunded, released = run_together(
            lambda payment_pk=payment_pk: payment_refund(payment_id=payment_pk, staff_user=staff),
            lambda url=url: staff_api.post(url, {"outcome": "release_full", "note": "Good enough."}, format="json"),
        )

        payment = payment_of(task_id)
        refunded_at_provider = LocalPayment.objects.get(id=payment.provider_payment_id).amount_refunded_minor
        earnings = Earning.objects.filter(source=f"task:{task_id}").count()
        if payment.status == PaymentStatus.REFUNDED:  # the refund won: no release, the task cancelled
            assert (refunded_at_provider, earnings, task_of(task_id).status) == (15000, 0, TaskStatus.CANCELLED)
            assert released.status_code == 409, released.content
        else:  # the release won: nothing refunded anywhere
            assert payment.status == PaymentStatus.RELEASED, (refunded, released)
            assert (refunded_at_provider, earnings, task_of(task_id).status) == (0, 1, TaskStatus.COMPLETED)
            assert isinstance(refunded, Exception), refunded
        assert DisputeResolution.objects.filter(task_id=task_id).count() == 1
        assert LedgerEntry.objects.filter(kind="refunded", source=f"task:{task_id}").count() <= 1
    assert ledger_problems() == []


@pytest.mark.django_db(transaction=True)
def test_the_poster_and_the_seller_cancelling_together_refund_once(alice_api, seller_api, api):
    for _ in range(3):
        selected = paid_task(alice_api, seller_api, api)
        task_id, bid_id = selected["task"]["id"], selected["bid"]["id"]
        overdue(task_id)

        answers = run_together(
            lambda task_id=task_id: alice_api.post(f"/api/v1/tasks/{task_id}/cancel"),
            lambda task_id=task_id, bid_id=bid_id: seller_api.post(f"/api/v1/tasks/{task_id}/bids/{bid_id}/withdraw"),
        )

        assert sorted(a.status_code for a in answers) == [200, 409], [a.content for a in answers]
        refunded_once(task_id)
        assert Bid.objects.get(pk=bid_id).status in (BidStatus.WITHDRAWN, BidStatus.REJECTED)


@pytest.mark.django_db(transaction=True)
def test_a_seller_giving_up_racing_the_posters_approval_applies_one(alice_api, seller_api, api):
    for _ in range(3):
        selected = in_review(alice_api, seller_api, api)
        task_id, bid_id = selected["task"]["id"], selected["bid"]["id"]

        approve, withdraw = run_together(
            lambda task_id=task_id: alice_api.post(f"/api/v1/tasks/{task_id}/delivery/approve"),
            lambda task_id=task_id, bid_id=bid_id: seller_api.post(f"/api/v1/tasks/{task_id}/bids/{bid_id}/withdraw"),
        )

        assert sorted((approve.status_code, withdraw.status_code)) == [200, 409], (approve.content, withdraw.content)
        payment = payment_of(task_id)
        if approve.status_code == 200:
            assert payment.status == PaymentStatus.RELEASED and payment.refunded_amount == Decimal(0)
            assert LocalPayment.objects.get(id=payment.provider_payment_id).amount_refunded_minor == 0
        else:
            refunded_once(task_id)
    assert ledger_problems() == []
