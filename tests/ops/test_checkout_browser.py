"""A user's whole journey with only HTTP and a browser (Debian's Chromium driven by Playwright) against
the live TLS server: credits granted once the address is verified, an image, a credit pack bought on the checkout
page, another image; a task posted, bid on, selected, paid on the checkout page, dispatched to the
agent, submitted and approved. And a declined card leaves the task open.

Once Playwright runs, this thread has an event loop and may not use the ORM: every check goes through
the API, as a user's would.
"""

from __future__ import annotations

import re
import time
import uuid
from collections.abc import Callable
from datetime import timedelta
from pathlib import Path

import httpx
import pytest
from django.core import mail
from django.utils import timezone

from tests.ops.test_browser import CHROMIUM, CHROMIUM_ARGS, PolicyWatch
from tests.support.servers import serve_app_over_tls
from tests.tasks_market.conftest import Receiver
from tests.tasks_market.factories import text_artefact

PASSWORD = "correct horse battery"


VERIFICATION_TOKEN = re.compile(r'"token": "([^"]+)"')


def outbox_verification_token(email: str) -> str:
    """The token of the verification mail to `email` in Django's test outbox (the server runs in this process)."""

    def found() -> str | None:
        for message in reversed(mail.outbox):
            if message.to == [email] and message.subject == "Verify your e-mail address":
                return VERIFICATION_TOKEN.search(message.body).group(1)
        return None

    return wait_for(found)


class User:
    """One person's HTTP session with the API: register, log in, verify the address with the token mailed to it
    (`verification_token(email)` reads it), then call it with the JWT."""

    def __init__(self, base: str, email: str, verification_token: Callable[[str], str] = outbox_verification_token):
        self.http = httpx.Client(base_url=base, verify=False, timeout=30)
        registered = self.http.post("/api/v1/auth/register", json={"email": email, "password": PASSWORD})
        assert registered.status_code == 201, registered.text
        token = self.http.post("/api/v1/auth/token", json={"email": email, "password": PASSWORD}).json()["access"]
        self.http.headers["Authorization"] = f"Bearer {token}"
        self.call("POST", "/api/v1/auth/email/verify", json={"token": verification_token(email)})

    def call(self, method: str, path: str, expect: int = 200, **kwargs) -> dict:
        response = self.http.request(method, path, **kwargs)
        assert response.status_code == expect, f"{method} {path}: {response.status_code} {response.text}"
        return response.json() if response.content else {}

    def credits(self) -> int:
        return self.call("GET", "/api/v1/allmodelchat/credits")["credits"]

    def generate(self, expect: int = 200) -> dict:
        body = {"prompt": "A red bicycle at dawn", "conversation_id": str(uuid.uuid4())}
        return self.call("POST", "/api/v1/allmodelchat/generate/image", expect=expect, json=body)


def pay_on_the_checkout_page(page, url: str, button: str = "#pay") -> str:
    """Open the checkout page, check it shows a price, press a button; the outcome the page reports."""
    PolicyWatch.policy(page.goto(url))
    assert page.locator("#payee").is_visible() and page.locator("#description").is_visible()
    page.locator(button).click()
    page.wait_for_selector("#outcome")
    return page.locator("#outcome").get_attribute("data-outcome")


def post_task_and_bid(poster: User, developer: User, agent_url: str) -> tuple[dict, dict, dict]:
    task = poster.call(
        "POST",
        "/api/v1/tasks",
        expect=201,
        json={
            "title": "Write launch copy for our analytics dashboard",
            "description": "Announce the new analytics dashboard to marketing teams; friendly tone.",
            "budget_amount": "200.00",
            "budget_currency": "usd",
            "deadline": (timezone.now() + timedelta(days=7)).isoformat(),
            "category": "content",
            "requirements": ["Under 300 words"],
        },
    )
    agent = developer.call(
        "POST",
        "/api/v1/agents",
        expect=201,
        json={"name": "Copybot", "description": "Writes launch copy.", "endpoint_url": agent_url},
    )
    bid = developer.call(
        "POST",
        f"/api/v1/tasks/{task['id']}/bids",
        expect=201,
        json={
            "agent_id": agent["id"],
            "amount": "150.00",
            "currency": "usd",
            "proposal": "Friendly launch copy for the analytics dashboard, with the free trial up front.",
            "eta_hours": 24,
        },
    )
    return task, agent, bid


def wait_for(condition, timeout: float = 20.0):
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if result := condition():
            return result
        time.sleep(0.1)
    raise AssertionError("timed out")


@pytest.fixture
def live(tmp_path, settings):
    """The app over TLS; the local provider links its checkout pages from it and posts its events to it."""
    assert Path(CHROMIUM).exists(), "Debian's chromium is missing: `make test` installs it (apt-get install chromium)"
    with serve_app_over_tls(tmp_path) as base:
        settings.PUBLIC_BASE_URL = base
        settings.PAYMENTS_LOCAL_WEBHOOK_URL = f"{base}/api/v1/webhooks/payments"
        settings.SIGNUP_CREDITS = 1  # the cheapest image costs 1: one image, then a top-up is needed
        yield base


@pytest.fixture
def agent_endpoint():
    receiver = Receiver()
    yield receiver
    receiver.close()


@pytest.mark.timeout(300)
@pytest.mark.django_db(transaction=True)
def test_the_whole_journey_with_http_and_a_browser(live, agent_endpoint, tmp_path):
    from playwright.sync_api import sync_playwright

    poster = User(live, "poster@example.com")
    developer = User(live, "developer@example.com")

    with sync_playwright() as playwright:
        browser = playwright.chromium.launch(executable_path=CHROMIUM, args=CHROMIUM_ARGS, headless=True)
        context = browser.new_context(ignore_https_errors=True)
        watch = PolicyWatch(context)
        page = context.new_page()

        # Verifying the address granted the sign-up credits: one image, then the balance is spent.
        assert poster.credits() == 1
        assert poster.generate()["credit_cost"] == 1
        assert poster.credits() == 0
        poster.generate(expect=402)

        # A credit pack bought on the checkout page; the next image works.
        packs = poster.call("GET", "/api/v1/allmodelchat/credits")["packs"]
        top_up = poster.call("POST", "/api/v1/allmodelchat/credits/top-up", expect=201, json={"pack": packs[0]["id"]})
        assert pay_on_the_checkout_page(page, top_up["checkout_url"]) == "paid"
        assert poster.credits() == packs[0]["credits"]
        image = poster.generate()
        assert httpx.get(image["url"], verify=False).headers["content-type"] == "image/png"
        assert poster.credits() == packs[0]["credits"] - 1
        ledger = poster.call("GET", "/api/v1/allmodelchat/credits/transactions")
        assert [t["kind"] for t in ledger["items"]] == ["image_generation", "purchase", "image_generation", "grant"]

        # A task, a bid, the selection paid on the checkout page: the agent gets its dispatch.
        task, agent, bid = post_task_and_bid(poster, developer, agent_endpoint.url)
        agent_endpoint.secret = agent["signing_secret"]
        selection = poster.call("POST", f"/api/v1/tasks/{task['id']}/bids/{bid['id']}/select")
        assert selection["task"]["status"] == "awaiting_payment"
        assert pay_on_the_checkout_page(page, selection["payment"]["checkout_url"]) == "paid"
        page.screenshot(path=str(tmp_path / "checkout-paid.png"))
        browser.close()

    assert watch.violations == [], "\n".join(watch.violations)

    assert poster.call("GET", f"/api/v1/tasks/{task['id']}")["status"] == "delivering"
    [dispatch] = wait_for(lambda: agent_endpoint.bodies("task.dispatched"))
    assert agent_endpoint.requests[0]["verified"] is True
    submitted = developer.call(
        "POST", dispatch["data"]["submit"]["path"], json={"artefacts": [text_artefact("Launch copy.")], "notes": "v1"}
    )
    assert submitted["task_status"] == "in_review"
    approved = poster.call("POST", f"/api/v1/tasks/{task['id']}/delivery/approve")
    assert approved["task_status"] == "completed"


@pytest.mark.timeout(300)
@pytest.mark.django_db(transaction=True)
def test_a_declined_card_leaves_the_task_open(live):
    from playwright.sync_api import sync_playwright

    poster = User(live, "poster@example.com")
    developer = User(live, "developer@example.com")
    task, _, bid = post_task_and_bid(poster, developer, "https://agents.example.com/hook")
    selection = poster.call("POST", f"/api/v1/tasks/{task['id']}/bids/{bid['id']}/select")

    with sync_playwright() as playwright:
        browser = playwright.chromium.launch(executable_path=CHROMIUM, args=CHROMIUM_ARGS, headless=True)
        context = browser.new_context(ignore_https_errors=True)
        watch = PolicyWatch(context)
        page = context.new_page()
        outcome = pay_on_the_checkout_page(page, selection["payment"]["checkout_url"], "#card-declined")
        page.goto(selection["payment"]["checkout_url"])
        used = page.locator("#state").get_attribute("data-state")
        browser.close()

    assert watch.violations == [], "\n".join(watch.violations)
    assert outcome == "card_declined"
    assert used == "used"
    assert poster.call("GET", f"/api/v1/tasks/{task['id']}")["status"] == "open"
    assert poster.call("GET", f"/api/v1/tasks/{task['id']}/bids")["items"][0]["status"] == "pending"
