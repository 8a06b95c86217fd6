"""Helpers of the money tests: a task paid through the real flow (API, local provider, signed webhook),
and the ledger as a table."""

from __future__ import annotations

import threading
from collections.abc import Callable
from decimal import Decimal

import pytest
from django.db import connection

from payments.models import LedgerLine, LocalConnectObject, Payment, PayoutAccount
from payments.providers.local import LocalPaymentProvider, account_event_object
from payments.services.accounts import payout_account_apply, payout_account_start
from tasks_market.models import Task
from tests.conftest import client_with_token, jwt_for
from tests.support.factories import UserFactory
from tests.tasks_market.conftest import selected_task, simulate_payment
from tests.tasks_market.factories import text_artefact


def paid_task(poster_api, seller_api, api, **bid) -> dict:
    """A task whose payment was captured (the poster paid on the local provider): {task, payment, ...}."""
    selected = selected_task(poster_api, seller_api)
    response = simulate_payment(api, selected["payment"]["provider_payment_id"])
    assert response.status_code == 200 and response.json()["status"] == "processed", response.content
    return selected


def in_review(poster_api, seller_api, api) -> dict:
    """A paid task whose delivery the seller submitted: in review."""
    selected = paid_task(poster_api, seller_api, api)
    submitted = seller_api.post(
        f"/api/v1/tasks/{selected['task']['id']}/delivery",
        {"artefacts": [text_artefact()], "notes": "v1"},
        format="json",
    )
    assert submitted.status_code == 200, submitted.content
    return selected


def disputed(poster_api, seller_api, api) -> dict:
    selected = in_review(poster_api, seller_api, api)
    response = poster_api.post(
        f"/api/v1/tasks/{selected['task']['id']}/delivery/dispute", {"reason": "Not what we asked."}, format="json"
    )
    assert response.status_code == 200, response.content
    return selected


def onboard(user, name: str = "Bob Seller") -> PayoutAccount:
    """The owner completes the local hosted onboarding (as the page does, without the browser)."""
    started = payout_account_start(owner=user)
    link_id = started.onboarding_url.rstrip("/").rsplit("/", 1)[1]
    LocalPaymentProvider().complete_onboarding(
        link_id=link_id, display_name=name, bank_account="DE89370400440532013000"
    )
    account = LocalConnectObject.objects.get(id=started.account.provider_account_id)
    return payout_account_apply(provider_account_id=account.id, obj=account_event_object(account))


def ledger_rows(task_id) -> list[tuple[str, str, str, Decimal]]:
    """(entry kind, account, currency, amount) of every line of the task's source, in order."""
    return [
        (line.entry.kind, line.account, line.currency, line.amount)
        for line in LedgerLine.objects.filter(source=f"task:{task_id}")
        .select_related("entry")
        .order_by("entry_id", "id")
    ]


def print_ledger(task_id) -> None:
    print(f"\nledger of task:{task_id}")
    print(f"{'entry':<20} {'account':<60} {'amount':>10} cur")
    for kind, account, currency, amount in ledger_rows(task_id):
        print(f"{kind:<20} {account:<60} {amount:>10} {currency}")


def run_together(*calls: Callable[[], object]) -> list[object]:
    """Run every call in its own thread, all released at once by a barrier; results (or exceptions) in order."""
    barrier = threading.Barrier(len(calls))
    results: list[object] = [None] * len(calls)

    def run(index: int, call: Callable[[], object]) -> None:
        try:
            barrier.wait()
            results[index] = call()
        except Exception as exc:  # reported to the test
            results[index] = exc
        finally:
            connection.close()

    threads = [threading.Thread(target=run, args=(i, call)) for i, call in enumerate(calls)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    return results


@pytest.fixture
def seller(db):
    return UserFactory(email="seller@example.com")


@pytest.fixture
def seller_api(seller):
    return client_with_token(jwt_for(seller))


def payment_of(task_id) -> Payment:
    return Payment.objects.get(source=f"task:{task_id}")


def task_of(task_id) -> Task:
    return Task.objects.get(pk=task_id)
