"""The local provider's hosted checkout: `/checkout/{session}` shows what is paid, and paying or declining
settles the payment and sends the signed event to our webhook (served over real TLS, as on `make run`)."""

from __future__ import annotations

from datetime import timedelta
from io import StringIO
from urllib.parse import urlsplit

import pytest
from django.core.management import call_command
from django.test import Client
from django.utils import timezone

from payments.models import LocalCheckoutSession, LocalPayment, LocalSubscription, Payment
from tasks_market.models import Bid, Task
from teams.models import Team
from tests.tasks_market.conftest import Receiver, selected_task
from webhooks_app.models import InboundEvent


def path_of(url: str) -> str:
    return urlsplit(url).path


@pytest.fixture
def browser() -> Client:
    return Client()


@pytest.fixture
def webhook(settings, tls_server):
    """Our own webhook, live: the checkout page sends its events there."""
    settings.PAYMENTS_LOCAL_WEBHOOK_URL = f"{tls_server}/api/v1/webhooks/payments"
    return tls_server


@pytest.fixture
def agent():
    receiver = Receiver()
    yield receiver
    receiver.close()


def page(browser: Client, url: str):
    return browser.get(path_of(url), secure=True)


def choose(browser: Client, url: str, choice: str):
    return browser.post(path_of(url), {"choice": choice}, secure=True)


# --- What the page shows -------------------------------------------------------------------------


@pytest.mark.django_db
def test_a_selected_bid_has_a_checkout_page_that_shows_what_is_paid(alice_api, bob_api, browser, settings):
    settings.PUBLIC_BASE_URL = "https://shop.example.test"
    flow = selected_task(alice_api, bob_api)
    url = flow["payment"]["checkout_url"]

    response = page(browser, url)

    assert url.startswith("https://shop.example.test/checkout/")
    assert len(path_of(url).rsplit("/", 1)[1]) >= 40  # an unguessable id
    assert response.status_code == 200
    html = response.content.decode()
    assert "150.00 USD" in html
    assert f"Task: {flow['task']['title']}" in html
    assert "Agent Copybot" in html
    assert 'name="csrfmiddlewaretoken"' in html and 'value="pay"' in html and 'value="decline"' in html
    assert response["Cache-Control"].startswith("max-age=0")
    assert "X-RateLimit-Limit" in response


@pytest.mark.django_db
def test_the_page_needs_https_and_an_existing_session(alice_api, bob_api, browser):
    flow = selected_task(alice_api, bob_api)

    assert browser.get(path_of(flow["payment"]["checkout_url"])).status_code == 403  # plain HTTP
    assert browser.get("/checkout/" + "x" * 43, secure=True).status_code == 404


# --- Paying and declining ---------------------------------------------------------------------------------


@pytest.mark.django_db(transaction=True)
def test_paying_settles_the_payment_and_the_task_is_dispatched(alice_api, bob_api, browser, webhook, agent):
    flow = selected_task(alice_api, bob_api, agent.url)
    agent.secret = flow["agent"]["signing_secret"]

    response = choose(browser, flow["payment"]["checkout_url"], "pay")

    assert response.status_code == 200
    assert "Payment complete" in response.content.decode()
    assert LocalPayment.objects.get(id=flow["payment"]["provider_payment_id"]).status == "succeeded"
    assert InboundEvent.objects.get().status == "processed"
    assert Task.objects.get(id=flow["task"]["id"]).status == "delivering"
    assert Payment.objects.get(id=flow["payment"]["id"]).status == "succeeded"
    assert agent.types() == ["task.dispatched"]


@pytest.mark.django_db(transaction=True)
@pytest.mark.parametrize("choice", ["decline", "card_declined"])
def test_declining_fails_the_payment_and_the_task_is_open_again(alice_api, bob_api, browser, webhook, choice):
    flow = selected_task(alice_api, bob_api)

    response = choose(browser, flow["payment"]["checkout_url"], choice)

    assert response.status_code == 200
    assert LocalPayment.objects.get(id=flow["payment"]["provider_payment_id"]).status == "failed"
    assert Task.objects.get(id=flow["task"]["id"]).status == "open"
    assert Bid.objects.get(id=flow["bid"]["id"]).status == "pending"


@pytest.mark.django_db(transaction=True)
def test_the_page_links_back_to_the_callers_urls(alice_api, bob_api, browser, webhook):
    flow = selected_task(alice_api, bob_api)
    task_id, bid_id = flow["task"]["id"], flow["bid"]["id"]
    # A fresh payment for the same bid, with return URLs: fail the first one, then select again.
    choose(browser, flow["payment"]["checkout_url"], "decline")
    again = alice_api.post(
        f"/api/v1/tasks/{task_id}/bids/{bid_id}/select",
        {"success_url": "https://app.example.com/paid", "cancel_url": "https://app.example.com/cancelled"},
        format="json",
    ).json()

    paid = choose(browser, again["payment"]["checkout_url"], "pay").content.decode()

    assert 'href="https://app.example.com/paid"' in paid
    assert "https://app.example.com/cancelled" not in paid


@pytest.mark.django_db(transaction=True)
def test_a_team_subscription_is_paid_on_its_checkout_page(alice_api, browser, webhook):
    hired = alice_api.post("/api/v1/teams", {"team_type": "content", "display_name": "Launch team"}, format="json")
    assert hired.status_code == 201, hired.content
    url = hired.json()["checkout_url"]

    shown = page(browser, url).content.decode()
    paid = choose(browser, url, "pay")

    assert "Subscription to the starter plan" in shown and "alice@example.com" in shown
    assert paid.status_code == 200
    event = InboundEvent.objects.get()
    assert (event.type, event.status) == ("invoice.paid", "processed")
    assert Team.objects.get(id=hired.json()["id"]).status == "active"
    assert LocalCheckoutSession.objects.get(subscription__isnull=False).status == "completed"


@pytest.mark.django_db(transaction=True)
def test_a_declined_subscription_payment_makes_the_team_past_due(alice_api, browser, webhook):
    hired = alice_api.post("/api/v1/teams", {"team_type": "content", "display_name": "Launch team"}, format="json")

    choose(browser, hired.json()["checkout_url"], "card_declined")

    assert Team.objects.get(id=hired.json()["id"]).status == "past_due"
    assert LocalSubscription.objects.get().status == "past_due"


# --- Sessions that are no longer open change nothing -----------------------------------------------------


def assert_unchanged(flow, status: str = "requires_payment"):
    assert LocalPayment.objects.get(id=flow["payment"]["provider_payment_id"]).status == status
    assert not InboundEvent.objects.exclude(status="processed").exists()


@pytest.mark.django_db(transaction=True)
def test_a_used_session_says_so_and_changes_nothing(alice_api, bob_api, browser, webhook):
    flow = selected_task(alice_api, bob_api)
    url = flow["payment"]["checkout_url"]
    choose(browser, url, "pay")

    again = choose(browser, url, "decline")
    shown = page(browser, url)

    assert again.status_code == 409 and shown.status_code == 409
    assert "already been used" in again.content.decode()
    assert LocalPayment.objects.get(id=flow["payment"]["provider_payment_id"]).status == "succeeded"
    assert InboundEvent.objects.count() == 1
    assert Task.objects.get(id=flow["task"]["id"]).status == "delivering"


@pytest.mark.django_db
def test_an_expired_session_says_so_and_changes_nothing(alice_api, bob_api, browser):
    flow = selected_task(alice_api, bob_api)
    LocalCheckoutSession.objects.update(expires_at=timezone.now() - timedelta(seconds=1))

    response = choose(browser, flow["payment"]["checkout_url"], "pay")

    assert response.status_code == 410
    assert "expired" in response.content.decode()
    assert_unchanged(flow)
    assert not InboundEvent.objects.exists()
    assert Task.objects.get(id=flow["task"]["id"]).status == "awaiting_payment"


@pytest.mark.django_db
def test_a_cancelled_payment_says_so_and_changes_nothing(alice_api, bob_api, browser):
    flow = selected_task(alice_api, bob_api)
    assert alice_api.post(f"/api/v1/tasks/{flow['task']['id']}/cancel").status_code == 200

    shown = page(browser, flow["payment"]["checkout_url"])
    response = choose(browser, flow["payment"]["checkout_url"], "pay")

    assert shown.status_code == 410 and response.status_code == 410
    assert "cancelled" in response.content.decode()
    assert_unchanged(flow, status="cancelled")
    assert not InboundEvent.objects.exists()


@pytest.mark.django_db
def test_a_session_settled_elsewhere_counts_as_used(alice_api, bob_api, browser):
    flow = selected_task(alice_api, bob_api)
    # `manage.py payments_simulate PAYMENT succeeded --no-send`: settled without the page.
    call_command(
        "payments_simulate", flow["payment"]["provider_payment_id"], "succeeded", "--no-send", stdout=StringIO()
    )

    assert choose(browser, flow["payment"]["checkout_url"], "pay").status_code == 409
    assert LocalCheckoutSession.objects.get().status == "open"


@pytest.mark.django_db
def test_an_unknown_choice_is_400_and_changes_nothing(alice_api, bob_api, browser):
    flow = selected_task(alice_api, bob_api)

    response = choose(browser, flow["payment"]["checkout_url"], "steal")

    assert response.status_code == 400
    assert_unchanged(flow)
    assert LocalCheckoutSession.objects.get().status == "open"
