"""`manage.py ledger_check` passes after the money flows and fails on a hand-broken entry."""

from __future__ import annotations

import io
from decimal import Decimal

import pytest
from django.core.management import CommandError, call_command

from payments.models import Earning, LedgerEntry, LedgerLine
from payments.services.payouts import payouts_run
from payments.tasks import check_ledger
from tests.payments.payouts.conftest import disputed, in_review, onboard

pytestmark = pytest.mark.django_db


@pytest.fixture
def flows(alice_api, seller_api, seller, staff_api, api):
    onboard(seller)
    approved = in_review(alice_api, seller_api, api)["task"]["id"]
    alice_api.post(f"/api/v1/tasks/{approved}/delivery/approve")
    split = disputed(alice_api, seller_api, api)["task"]["id"]
    staff_api.post(f"/api/v1/disputes/{split}/resolve", {"outcome": "split", "refund_amount": "40.00", "note": "n"})
    payouts_run()
    return approved, split


def test_it_passes_after_the_flows(flows):
    out = io.StringIO()
    call_command("ledger_check", stdout=out)
    assert "ledger check passed" in out.getvalue()
    assert check_ledger() == 0


def test_it_fails_listing_an_unbalanced_entry(flows, caplog):
    line = LedgerLine.objects.filter(account="platform:fees").first()
    LedgerLine.objects.filter(pk=line.pk).update(amount=line.amount - Decimal("0.01"))
    err = io.StringIO()

    with pytest.raises(CommandError) as failed:
        call_command("ledger_check", stderr=err)

    assert failed.value.returncode == 1
    assert f"entry #{line.entry_id}" in err.getvalue() and "unbalanced" in err.getvalue()
    assert f"{line.source}: paid" in err.getvalue()  # the task no longer adds up either
    assert check_ledger() > 0 and "ledger check:" in caplog.text


def test_it_fails_when_an_owner_does_not_add_up(flows):
    earning = Earning.objects.first()
    Earning.objects.filter(pk=earning.pk).update(amount=earning.amount + 1, gross=earning.gross + 1)
    err = io.StringIO()

    with pytest.raises(CommandError):
        call_command("ledger_check", stderr=err)

    assert f"owner {earning.owner_id}" in err.getvalue()
    assert LedgerEntry.objects.exists()
