"""The money path: captured when paid, released on approval or after the review window, pending until
settled, then available, then paid out; the ledger balanced at every step (docs/payouts.md)."""

from __future__ import annotations

import io
import json
from datetime import timedelta
from decimal import Decimal

import pytest
from django.core.management import call_command
from django.utils import timezone

from payments.ledger import seller_balances
from payments.ledger_check import ledger_problems
from payments.models import Earning, LedgerEntry, LocalPayment, PaymentStatus, Payout
from payments.services.earnings import earnings_settle
from payments.services.payouts import payouts_run
from tasks_market.models import Delivery, DeliveryStatus, TaskStatus
from tasks_market.services.deliveries import deliveries_release_due
from tests.payments.payouts.conftest import (
    in_review,
    ledger_rows,
    onboard,
    payment_of,
    print_ledger,
    task_of,
)
from webhooks_app.models import WebhookEvent

pytestmark = pytest.mark.django_db


def subscribe(client, events: list[str]) -> None:
    body = {"url": "https://hooks.example.com/money", "events": events}
    response = client.post("/api/v1/webhooks/subscriptions", body, format="json")
    assert response.status_code == 201, response.content


def sent(event_type: str) -> list[dict]:
    """The data of every outbound event of this type (written with the change; delivered after commit)."""
    return [json.loads(e.body)["data"] for e in WebhookEvent.objects.filter(type=event_type).order_by("created_at")]


def test_paying_captures_and_approving_releases_the_net_as_a_pending_earning(alice_api, seller_api, seller, api):
    selected = in_review(alice_api, seller_api, api)
    task_id = selected["task"]["id"]
    payment = payment_of(task_id)
    assert payment.captured_at is not None  # captured when paid, not on approval
    assert LocalPayment.objects.get(id=payment.provider_payment_id).status == "succeeded"

    response = alice_api.post(f"/api/v1/tasks/{task_id}/delivery/approve")

    assert response.status_code == 200, response.content
    earning = Earning.objects.get(source=f"task:{task_id}")
    assert (earning.owner_id, earning.gross, earning.fee, earning.amount, earning.status) == (
        seller.pk,
        Decimal("150.00"),
        Decimal("15.00"),
        Decimal("135.00"),
        "pending",
    )
    assert payment_of(task_id).status == PaymentStatus.RELEASED
    assert LocalPayment.objects.get(id=payment.provider_payment_id).status == "succeeded"  # never charged again
    assert ledger_rows(task_id) == [
        ("captured", "platform:captured", "usd", Decimal("150.000")),
        ("captured", "platform:held", "usd", Decimal("-150.000")),
        ("captured", "platform:cash", "usd", Decimal("150.000")),
        ("captured", "outside", "usd", Decimal("-150.000")),
        ("released", "platform:held", "usd", Decimal("150.000")),
        ("released", "platform:fees", "usd", Decimal("-15.000")),
        ("released", f"seller:{seller.pk}:pending", "usd", Decimal("-135.000")),
    ]
    assert ledger_problems() == []


def test_pending_then_available_then_paid_out_once_the_account_is_active(alice_api, seller_api, seller, api):
    subscribe(seller_api, ["earning.available", "payout.paid"])
    task_id = in_review(alice_api, seller_api, api)["task"]["id"]
    assert alice_api.post(f"/api/v1/tasks/{task_id}/delivery/approve").status_code == 200

    # Settled (the local provider's delay is 0): available, announced; no account yet, so no payout.
    assert payouts_run() == 0
    assert Earning.objects.get().status == "available"
    assert [data["amount"] for data in sent("earning.available")] == ["135.00"]
    assert seller_balances(seller.pk)["usd"]["available"] == Decimal("135.000")
    balance = seller_api.get("/api/v1/payouts/balance").json()
    assert balance["items"] == [
        {"currency": "usd", "pending": "0.00", "available": "135.00", "paid_out": "0.00", "frozen": "0.00"}
    ]

    onboard(seller)
    assert payouts_run() == 1
    assert payouts_run() == 0  # nothing left: safe to run twice

    payout = Payout.objects.get()
    assert (payout.amount, payout.status, payout.owner_id) == (Decimal("135.000"), "paid", seller.pk)
    earning = Earning.objects.get()
    assert (earning.status, earning.payout_id) == ("paid_out", payout.pk)
    assert earning.transfer_id.startswith("tr_")
    assert [data["status"] for data in sent("payout.paid")] == ["paid"]
    assert seller_balances(seller.pk)["usd"] == {
        "pending": Decimal(0),
        "available": Decimal(0),
        "paid_out": Decimal("135.000"),
        "frozen": Decimal(0),
    }
    print_ledger(task_id)
    assert ledger_problems() == []
    call_command("ledger_check")


def test_a_silent_poster_is_released_by_the_review_window(alice_api, seller_api, api, settings):
    subscribe(alice_api, ["delivery.approved"])
    task_id = in_review(alice_api, seller_api, api)["task"]["id"]

    assert deliveries_release_due() == 0  # the window is not over yet
    Delivery.objects.filter(task_id=task_id).update(submitted_at=timezone.now() - timedelta(hours=73))
    assert deliveries_release_due() == 1
    assert deliveries_release_due() == 0  # safe to run twice

    assert task_of(task_id).status == TaskStatus.COMPLETED
    assert Delivery.objects.get(task_id=task_id).status == DeliveryStatus.APPROVED
    assert Earning.objects.filter(source=f"task:{task_id}").count() == 1
    assert [data.get("auto") for data in sent("delivery.approved")] == [True]
    assert LedgerEntry.objects.filter(kind="released").count() == 1
    assert ledger_problems() == []


def test_a_revision_request_or_dispute_stops_the_review_window(alice_api, seller_api, api):
    task_id = in_review(alice_api, seller_api, api)["task"]["id"]
    alice_api.post(f"/api/v1/tasks/{task_id}/delivery/dispute", {"reason": "Wrong."}, format="json")
    Delivery.objects.filter(task_id=task_id).update(submitted_at=timezone.now() - timedelta(days=30))

    assert deliveries_release_due() == 0
    assert task_of(task_id).status == TaskStatus.DISPUTED
    assert not Earning.objects.exists()


def test_the_review_window_is_a_setting(alice_api, seller_api, api, settings):
    settings.REVIEW_WINDOW_HOURS = 1
    task_id = in_review(alice_api, seller_api, api)["task"]["id"]
    Delivery.objects.filter(task_id=task_id).update(submitted_at=timezone.now() - timedelta(minutes=61))

    assert deliveries_release_due() == 1


def test_settlement_waits_for_the_delay(alice_api, seller_api, api, settings):
    settings.PAYOUT_SETTLEMENT_DELAY_SECONDS = 3600
    task_id = in_review(alice_api, seller_api, api)["task"]["id"]
    alice_api.post(f"/api/v1/tasks/{task_id}/delivery/approve")

    assert earnings_settle() == 0
    assert earnings_settle(now=timezone.now() + timedelta(hours=2)) == 1
    assert Earning.objects.get().status == "available"


def test_an_owner_without_an_active_account_keeps_accruing(alice_api, seller_api, seller, api):
    for _ in range(2):
        task_id = in_review(alice_api, seller_api, api)["task"]["id"]
        alice_api.post(f"/api/v1/tasks/{task_id}/delivery/approve")
    payouts_run()

    assert not Payout.objects.exists()
    assert seller_balances(seller.pk)["usd"]["available"] == Decimal("270.000")
    onboard(seller)
    payouts_run()
    assert Payout.objects.get().amount == Decimal("270.000")
    assert ledger_problems() == []


def test_the_commands_run_the_jobs_now(alice_api, seller_api, seller, api):
    task_id = in_review(alice_api, seller_api, api)["task"]["id"]
    out = io.StringIO()

    call_command("release_reviewed", "--window-hours", "0", stdout=out)
    onboard(seller)
    call_command("payouts_run", stdout=out)

    assert "1 delivery released." in out.getvalue() and "1 payout(s) made." in out.getvalue()
    assert task_of(task_id).status == TaskStatus.COMPLETED
    assert Payout.objects.get().status == "paid"
