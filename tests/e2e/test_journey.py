"""A newcomer's whole journey on `make run`, with only HTTP and a browser .

register → address verified by the mailed token → credits granted → images until the balance is spent → a
credit pack bought on the checkout page → another image; a task posted → an agent bids → select → paid on
the checkout page → the agent gets its signed dispatch → submit → approve. Against the real `make run`
server (embedded defaults, its worker and beat), so the local provider's checkout page, its signed event to
the server's own webhook and the dispatch by the worker are the ones a newcomer gets. Run shape only: production
settings refuse an agent endpoint on 127.0.0.1.
"""

from __future__ import annotations

from pathlib import Path

import httpx
import pytest

from tests.e2e.harness import mailed_verification_token
from tests.ops.test_browser import CHROMIUM, CHROMIUM_ARGS
from tests.ops.test_checkout_browser import User, pay_on_the_checkout_page, post_task_and_bid, wait_for
from tests.tasks_market.conftest import Receiver
from tests.tasks_market.factories import text_artefact

MAX_SIGNUP_IMAGES = 50  # SIGNUP_CREDITS is 10 by default; a bound so that a broken debit cannot loop forever


@pytest.mark.timeout(600)
@pytest.mark.parametrize("server", ["run"], indirect=True)
def test_a_newcomers_journey_with_http_and_a_browser(server, scenario, tmp_path):
    from playwright.sync_api import sync_playwright

    assert Path(CHROMIUM).exists(), "Debian's chromium is missing: `make test` installs it"
    poster = User(server.base_url, "journey-poster@example.com", mailed_verification_token(server))
    developer = User(server.base_url, "journey-developer@example.com", mailed_verification_token(server))
    agent_endpoint = Receiver()

    granted = poster.credits()
    assert granted > 0, "verifying the address grants credits"
    images = 0
    while poster.credits() > 0 and images < MAX_SIGNUP_IMAGES:
        poster.generate()
        images += 1
    poster.generate(expect=402)
    scenario.effects.update(signup_credits=granted, images_from_grant=images)

    with sync_playwright() as playwright:
        browser = playwright.chromium.launch(executable_path=CHROMIUM, args=CHROMIUM_ARGS, headless=True)
        page = browser.new_context(ignore_https_errors=True).new_page()

        packs = poster.call("GET", "/api/v1/allmodelchat/credits")["packs"]
        top_up = poster.call("POST", "/api/v1/allmodelchat/credits/top-up", expect=201, json={"pack": packs[0]["id"]})
        assert top_up["checkout_url"].startswith(server.base_url + "/checkout/")
        assert pay_on_the_checkout_page(page, top_up["checkout_url"]) == "paid"
        # The page's Pay settles the payment and posts the signed event to this server's own webhook.
        wait_for(lambda: poster.credits() == packs[0]["credits"])
        image = poster.generate()
        assert httpx.get(image["url"], verify=False).headers["content-type"] == "image/png"

        task, agent, bid = post_task_and_bid(poster, developer, agent_endpoint.url)
        agent_endpoint.secret = agent["signing_secret"]
        selection = poster.call("POST", f"/api/v1/tasks/{task['id']}/bids/{bid['id']}/select")
        assert selection["task"]["status"] == "awaiting_payment"
        assert pay_on_the_checkout_page(page, selection["payment"]["checkout_url"]) == "paid"
        page.screenshot(path=str(tmp_path / "checkout-paid.png"))
        browser.close()

    # The worker (not the web process) dispatches the task to the agent, signed with its secret.
    wait_for(lambda: poster.call("GET", f"/api/v1/tasks/{task['id']}")["status"] == "delivering")
    [dispatch] = wait_for(lambda: agent_endpoint.bodies("task.dispatched"), timeout=60)
    assert agent_endpoint.requests[0]["verified"] is True
    submitted = developer.call(
        "POST", dispatch["data"]["submit"]["path"], json={"artefacts": [text_artefact("Launch copy.")], "notes": "v1"}
    )
    assert submitted["task_status"] == "in_review"
    approved = poster.call("POST", f"/api/v1/tasks/{task['id']}/delivery/approve")
    assert approved["task_status"] == "completed"
    agent_endpoint.close()
    scenario.effects.update(top_up_credited=packs[0]["credits"], task=approved["task_status"], dispatches=1)
