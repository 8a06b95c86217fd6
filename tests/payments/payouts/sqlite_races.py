"""The money races on the embedded default (`make run`: SQLite, one threaded process), as
tests/payments/payouts/test_concurrency.py runs them on PostgreSQL.

    DJANGO_SETTINGS_MODULE=config.settings.local VAR_DIR=<dir> python -m tests.payments.payouts.sqlite_races

Migrates the database in VAR_DIR (the test gives it a copy of the run's migrated one), runs each race with
threads released by a barrier, and prints one JSON line: what each race left behind and the ledger check's
problems.
"""

from __future__ import annotations

import json
import threading
import time
from datetime import timedelta
from decimal import Decimal

import django


def main() -> None:
    django.setup()
    from django.core.management import call_command
    from django.db import connection, transaction
    from django.utils import timezone

    from payments.ledger_check import ledger_problems
    from payments.models import Earning, LedgerEntry, LocalConnectObject, LocalPayment, Payment, PayoutAccount
    from payments.providers.local_balance import book
    from payments.services.captures import ledger_captured
    from payments.services.chargebacks import chargeback_open
    from payments.services.earnings import earnings_settle
    from payments.services.payouts import payout_owner, payouts_run
    from tasks_market.models import Delivery, DeliveryStatus, DisputeResolution, Task
    from tasks_market.services.deliveries import deliveries_release_due, delivery_approve
    from tasks_market.services.disputes import dispute_resolve, payment_refund
    from tasks_market.services.paid_cancel import bid_withdraw_paid, task_cancel_paid
    from tests.tasks_market.factories import AgentFactory, delivering_task

    call_command("migrate", verbosity=0)

    def paid(status: str, agent=None):
        task, delivery = delivering_task(delivery_status=status, **({"agent": agent} if agent else {}))
        payment = Payment.objects.get(source=f"task:{task.pk}")
        Payment.objects.filter(pk=payment.pk).update(captured_at=timezone.now())
        ledger_captured(source=f"task:{task.id}", currency=payment.currency, amount=payment.amount)
        LocalPayment.objects.create(
            id=payment.provider_payment_id, amount_minor=15000, currency="usd", client_secret="s", status="succeeded"
        )
        # The capture in the local provider's balance, which a payout's transfer comes out of.
        book(account="", type="charge", amount_minor=15000, currency="usd", source=payment.provider_payment_id)
        Delivery.objects.filter(pk=delivery.pk).update(submitted_at=timezone.now() - timedelta(hours=80))
        return task

    def together(*calls):
        barrier = threading.Barrier(len(calls))
        results = [None] * len(calls)

        def run(index, call):
            try:
                barrier.wait()
                results[index] = call()
            except Exception as exc:  # reported below
                results[index] = exc
            finally:
                connection.close()

        threads = [threading.Thread(target=run, args=(i, c)) for i, c in enumerate(calls)]
        for thread in threads:
            thread.start()
        for thread in threads:
            thread.join()
        return [type(r).__name__ if isinstance(r, Exception) else "ok" for r in results]

    out = {}
    task = paid(DeliveryStatus.SUBMITTED)
    out["approve_vs_window"] = together(
        lambda: delivery_approve(user=task.poster, task_id=task.id), deliveries_release_due
    )
    out["approve_vs_window_earnings"] = Earning.objects.filter(source=f"task:{task.id}").count()

    task = paid(DeliveryStatus.DISPUTED)
    split = {"task_id": task.id, "outcome": "split", "refund_amount": Decimal("50.00"), "note": "half"}
    out["two_staff"] = together(lambda: dispute_resolve(**split), lambda: dispute_resolve(**split))
    out["two_staff_resolutions"] = DisputeResolution.objects.filter(task=task).count()
    out["two_staff_refunded_minor"] = LocalPayment.objects.get(
        id=Payment.objects.get(source=f"task:{task.pk}").provider_payment_id
    ).amount_refunded_minor

    agent = AgentFactory()
    PayoutAccount.objects.create(
        owner=agent.owner, provider="local", provider_account_id="acct_sqlite", status="active", payouts_enabled=True
    )
    LocalConnectObject.objects.create(id="acct_sqlite", kind="account", status="active")
    first = paid(DeliveryStatus.SUBMITTED, agent=agent)
    delivery_approve(user=first.poster, task_id=first.id)
    second = paid(DeliveryStatus.DISPUTED, agent=agent)
    split = {"task_id": second.id, "outcome": "split", "refund_amount": Decimal("50.00"), "note": "half"}
    out["refund_vs_payout"] = together(lambda: dispute_resolve(**split), payouts_run)
    payouts_run()
    out["refund_vs_payout_refunds"] = LedgerEntry.objects.filter(kind="refunded", source=f"task:{second.id}").count()
    paid_out = agent.owner.payouts.filter(status="paid")
    out["refund_vs_payout_paid"] = str(sum(p.amount for p in paid_out).quantize(Decimal("0.01")))

    # Staff's admin refund of a disputed task racing a release resolution: one decision applies.
    task = paid(DeliveryStatus.DISPUTED)
    payment = Payment.objects.get(source=f"task:{task.pk}")
    out["refund_vs_release"] = together(
        lambda: payment_refund(payment_id=payment.pk),
        lambda: dispute_resolve(task_id=task.id, outcome="release_full", note="Good enough."),
    )
    out["refund_vs_release_resolutions"] = DisputeResolution.objects.filter(task=task).count()
    out["refund_vs_release_refunded_minor"] = LocalPayment.objects.get(
        id=payment.provider_payment_id
    ).amount_refunded_minor
    out["refund_vs_release_earnings"] = Earning.objects.filter(source=f"task:{task.id}").count()

    # The poster cancelling an overdue paid task while its seller gives it up: refunded once.
    task = Task.objects.get(pk=paid(DeliveryStatus.DISPATCHED).pk)
    Task.objects.filter(pk=task.pk).update(deadline=timezone.now() - timedelta(days=2))
    Payment.objects.filter(source=f"task:{task.pk}").update(succeeded_at=timezone.now() - timedelta(days=10))
    seller = task.selected_bid.bidder
    out["cancel_vs_withdraw"] = sorted(
        together(
            lambda: task_cancel_paid(task_id=task.id, poster=task.poster),
            lambda: bid_withdraw_paid(user=seller, task_id=task.id, bid_id=task.selected_bid_id),
        )
    )
    payment = Payment.objects.get(source=f"task:{task.pk}")
    out["cancel_vs_withdraw_refunded_minor"] = LocalPayment.objects.get(
        id=payment.provider_payment_id
    ).amount_refunded_minor
    out["cancel_vs_withdraw_refunds"] = LedgerEntry.objects.filter(kind="refunded", source=f"task:{task.id}").count()

    # A card chargeback racing a payout's claim of the same earning: the claim waits for the chargeback's
    # transaction (SQLite: one writer at a time), then finds the earning frozen and pays nothing.
    agent = AgentFactory()
    PayoutAccount.objects.create(
        owner=agent.owner, provider="local", provider_account_id="acct_sqlite_cb", status="active", payouts_enabled=True
    )
    LocalConnectObject.objects.create(id="acct_sqlite_cb", kind="account", status="active")
    task = paid(DeliveryStatus.SUBMITTED, agent=agent)
    delivery_approve(user=task.poster, task_id=task.id)
    earnings_settle()
    payment_ref = Payment.objects.get(source=f"task:{task.pk}").provider_payment_id
    frozen, release = threading.Event(), threading.Event()
    claimed = {}

    def chargeback():
        try:
            with transaction.atomic():
                chargeback_open(payment_ref=payment_ref, dispute_id="dp_sqlite_race")
                frozen.set()
                release.wait(10)
        finally:
            connection.close()

    def claim():
        try:
            claimed["payout"] = payout_owner(owner_id=agent.owner_id, currency="usd")
        except Exception as exc:  # reported below
            claimed["payout"] = exc
        finally:
            connection.close()

    holder = threading.Thread(target=chargeback)
    holder.start()
    frozen.wait(10)
    claimer = threading.Thread(target=claim)
    claimer.start()
    time.sleep(1)  # the claim is waiting for the chargeback's transaction
    release.set()
    holder.join()
    claimer.join()
    out["chargeback_vs_claim"] = type(claimed["payout"]).__name__
    out["chargeback_vs_claim_payouts"] = agent.owner.payouts.count()
    out["chargeback_vs_claim_earning"] = Earning.objects.get(source=f"task:{task.id}").status
    out["ledger_problems"] = ledger_problems()
    print(json.dumps(out))


if __name__ == "__main__":
    main()
