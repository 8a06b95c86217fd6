"""Races on PostgreSQL, threads released together by a barrier: each money movement applies exactly once
(docs/payouts.md#exactly-once)."""

from __future__ import annotations

from datetime import timedelta
from decimal import Decimal

import pytest
from django.utils import timezone

from payments.ledger import seller_balances
from payments.ledger_check import ledger_problems
from payments.models import Earning, LedgerEntry, LocalPayment, Payout
from payments.services.payouts import payouts_run
from tasks_market.models import Delivery, DisputeResolution, TaskStatus
from tasks_market.services.deliveries import deliveries_release_due
from tests.conftest import client_with_token, jwt_for
from tests.payments.payouts.conftest import disputed, in_review, onboard, payment_of, run_together, task_of
from tests.support.factories import UserFactory
from webhooks_app.models import WebhookEvent

pytestmark = pytest.mark.django_db(transaction=True)


def test_approve_racing_the_review_window_job_releases_once(alice, alice_api, seller, seller_api, api):
    alice_api.post(
        "/api/v1/webhooks/subscriptions",
        {"url": "https://hooks.example.com/x", "events": ["delivery.approved"]},
        format="json",
    )
    poster = client_with_token(jwt_for(alice))
    for _ in range(3):  # a few rounds: either side may win each
        task_id = in_review(alice_api, seller_api, api)["task"]["id"]
        Delivery.objects.filter(task_id=task_id).update(submitted_at=timezone.now() - timedelta(hours=80))

        approve, job = run_together(
            lambda task_id=task_id: poster.post(f"/api/v1/tasks/{task_id}/delivery/approve"),
            deliveries_release_due,
        )

        assert not isinstance(job, Exception), job
        assert approve.status_code in (200, 409), approve.content
        assert task_of(task_id).status == TaskStatus.COMPLETED
        assert Earning.objects.filter(source=f"task:{task_id}").count() == 1
        assert LedgerEntry.objects.filter(kind="released", source=f"task:{task_id}").count() == 1
    assert WebhookEvent.objects.filter(type="delivery.approved").count() == 3
    assert ledger_problems() == []


def test_two_staff_resolving_one_dispute_apply_it_once(alice_api, seller_api, api):
    task_id = disputed(alice_api, seller_api, api)["task"]["id"]
    may_resolve = ["tasks_market.add_disputeresolution"]
    staff = [client_with_token(jwt_for(UserFactory(is_staff=True, permissions=may_resolve))) for _ in range(2)]
    body = {"outcome": "split", "refund_amount": "50.00", "note": "Half of it."}

    answers = run_together(
        *(lambda c=c: c.post(f"/api/v1/disputes/{task_id}/resolve", body, format="json") for c in staff)
    )

    assert [a.status_code for a in answers] == [200, 200], [a.content for a in answers]
    assert answers[0].json()["id"] == answers[1].json()["id"]
    assert DisputeResolution.objects.get().status == "applied"
    assert LocalPayment.objects.get(id=payment_of(task_id).provider_payment_id).amount_refunded_minor == 5000
    assert LedgerEntry.objects.filter(kind="refunded").count() == 1
    assert Earning.objects.get().amount == Decimal("90.00")
    assert ledger_problems() == []


def test_a_dispute_refund_racing_a_payout_both_apply_once(alice_api, seller, seller_api, api, staff_api):
    onboard(seller)
    first = in_review(alice_api, seller_api, api)["task"]["id"]
    alice_api.post(f"/api/v1/tasks/{first}/delivery/approve")
    second = disputed(alice_api, seller_api, api)["task"]["id"]
    body = {"outcome": "split", "refund_amount": "50.00", "note": "Half of it."}

    resolved, paid = run_together(
        lambda: staff_api.post(f"/api/v1/disputes/{second}/resolve", body, format="json"),
        payouts_run,
    )
    payouts_run()  # whatever the first run did not see

    assert resolved.status_code == 200, resolved.content
    assert not isinstance(paid, Exception), paid
    assert LocalPayment.objects.get(id=payment_of(second).provider_payment_id).amount_refunded_minor == 5000
    assert LedgerEntry.objects.filter(kind="refunded").count() == 1
    assert sum(p.amount for p in Payout.objects.all()) == Decimal("135.00") + Decimal("90.00")
    assert seller_balances(seller.pk)["usd"]["available"] == 0
    assert ledger_problems() == []
