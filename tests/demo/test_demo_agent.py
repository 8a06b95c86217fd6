"""The local demo agent (docs/guide.md#the-local-demo): it bids on open tasks in its categories through
the owner's services, verifies a dispatch's signature as any agent would, and delivers a result written by
the local language model."""

from __future__ import annotations

import json
import time
import uuid
from decimal import Decimal

import pytest
from django.core.management import call_command

from demo.services import AGENT_OWNER_EMAIL, AGENT_PATH, demo_agent_bid, demo_agent_ensure, demo_payout_account_ensure
from payments.models import LocalConnectObject, PayoutAccount
from signed_delivery.signing import sign_headers
from tasks_market.models import Bid, Delivery, DeliveryStatus, SavedSearch, TaskStatus
from tasks_market.services.dispatch import dispatch_payload
from tests.tasks_market.factories import TaskFactory, delivering_task

pytestmark = [pytest.mark.django_db, pytest.mark.urls("tests.demo.urls")]


@pytest.fixture
def demo(settings):
    settings.DEMO_AGENT_ENABLED = True
    settings.DEMO_USER_PASSWORD = "the-demo-password"
    settings.PUBLIC_BASE_URL = "https://127.0.0.1:9443"
    return demo_agent_ensure()


def test_it_is_registered_once_with_its_endpoint_at_this_servers_origin(demo, settings):
    assert demo.endpoint_url == "https://127.0.0.1:9443" + AGENT_PATH
    assert demo.owner.email == AGENT_OWNER_EMAIL and demo.owner.check_password("the-demo-password")
    settings.PUBLIC_BASE_URL = "https://127.0.0.1:9555"  # `make run` on another PORT

    again = demo_agent_ensure()

    assert again.id == demo.id and again.endpoint_url == "https://127.0.0.1:9555" + AGENT_PATH


def test_it_bids_on_open_tasks_in_its_categories_once(demo):
    content = TaskFactory(category="content", budget_amount=Decimal("40.00"))
    design = TaskFactory(category="design")

    assert demo_agent_bid() == 1
    assert demo_agent_bid() == 0  # never twice on one task

    [bid] = Bid.objects.filter(agent=demo)
    assert (bid.task_id, bid.amount, bid.currency, bid.bidder_id) == (
        content.id,
        Decimal("36.00"),
        "usd",
        demo.owner_id,
    )
    assert not Bid.objects.filter(task=design).exists()


def signed(demo, message_type: str, data: dict, secret: str | None = None) -> tuple[bytes, dict[str, str]]:
    body = json.dumps({"type": message_type, "timestamp": "2026-01-01T00:00:00Z", "data": data}, default=str).encode()
    headers = sign_headers([secret or demo.signing_secret], f"msg_{uuid.uuid4().hex}", int(time.time()), body)
    return body, {f"HTTP_{name.upper().replace('-', '_')}": value for name, value in headers.items()}


def test_a_signed_dispatch_is_taken_and_delivered_with_the_local_model(demo, api):
    task, delivery = delivering_task(agent=demo, delivery_status="pending")
    body, headers = signed(demo, "task.dispatched", dispatch_payload(delivery))

    response = api.post(AGENT_PATH, data=body, content_type="application/json", **headers)

    assert response.status_code == 202, response.content
    delivery.refresh_from_db()
    task.refresh_from_db()
    assert delivery.status == DeliveryStatus.SUBMITTED and task.status == TaskStatus.IN_REVIEW
    [artefact] = delivery.submissions.get().artefacts.all()
    assert artefact.name == "result.md" and "(Local model)" in artefact.text


def test_it_saves_one_search_of_its_categories_and_bids_when_told_of_a_match(demo, api):
    demo_agent_ensure()  # the next `make run`
    task = TaskFactory(category="research", budget_amount=Decimal("50.00"))
    body, headers = signed(demo, "task.matched", {"search_id": str(uuid.uuid4()), "task": {"id": str(task.id)}})

    response = api.post(AGENT_PATH, data=body, content_type="application/json", **headers)

    [search] = SavedSearch.objects.filter(agent=demo)
    assert sorted(search.categories) == sorted(["content", "marketing", "research", "other"])
    assert response.status_code == 202, response.content
    assert Bid.objects.filter(agent=demo, task=task).count() == 1


def test_a_dispatch_signed_with_another_secret_is_refused(demo, api):
    _task, delivery = delivering_task(agent=demo, delivery_status="pending")
    other = "whsec_" + "QUFBQUFBQUFBQUFBQUFBQUFBQUFBQUFBQUFBQUFBQUE="
    body, headers = signed(demo, "task.dispatched", dispatch_payload(delivery), secret=other)

    response = api.post(AGENT_PATH, data=body, content_type="application/json", **headers)

    assert response.status_code == 401
    assert response.json()["code"] == "invalid_signature"
    assert Delivery.objects.get(pk=delivery.pk).status == DeliveryStatus.PENDING


def test_its_owner_gets_an_active_local_payout_account_once(demo, settings):
    settings.PAYMENTS_PROVIDER = "local"

    account = demo_payout_account_ensure(owner=demo.owner)
    again = demo_payout_account_ensure(owner=demo.owner)  # the next `make run`

    assert (account.status, account.payouts_enabled, account.display_name) == ("active", True, "Demo agent owner")
    assert again.pk == account.pk and PayoutAccount.objects.filter(owner=demo.owner).count() == 1
    assert LocalConnectObject.objects.filter(kind="account").count() == 1


def test_the_demo_agent_command_onboards_the_owner(settings, capsys):
    settings.DEMO_AGENT_ENABLED = True
    settings.DEMO_USER_PASSWORD = "the-demo-password"
    settings.PAYMENTS_PROVIDER = "local"

    call_command("demo_agent")
    call_command("demo_agent")

    assert PayoutAccount.objects.get(owner__email=AGENT_OWNER_EMAIL).status == "active"
    assert "payout account" in capsys.readouterr().out
