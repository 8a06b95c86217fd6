"""The marketplace pays its sellers, on the real `make run` server over HTTPS with a browser (Debian's
Chromium driven by Playwright) and the local payment provider (docs/payouts.md).

An owner onboards on the hosted onboarding page, registers an agent, bids and wins; the poster pays on
the checkout page; the agent delivers. Then, three ways:

- the poster approves: the earning is pending, then available, then paid out;
- the poster stays silent: the review window releases it;
- the poster disputes: staff split it through the admin-only API, the poster gets part back and the
  seller is paid the rest.

After each, `manage.py ledger_check` passes. The beat's money jobs run at once instead of on their
schedule, as an operator runs them with the server's environment: `manage.py release_reviewed
--window-hours 0` (as if the review window had passed) and `manage.py payouts_run`; the settle job alone
(pending → available, every 5 minutes) through `manage.py shell`, to see the earning available before
it is paid out. Run shape only: the agent endpoint is on 127.0.0.1, which production settings refuse.
"""

from __future__ import annotations

from decimal import Decimal
from pathlib import Path

import httpx
import pytest

from tests.e2e.harness import PASSWORD, Server, create_user, mailed_verification_token
from tests.ops.test_browser import CHROMIUM, CHROMIUM_ARGS
from tests.ops.test_checkout_browser import User, pay_on_the_checkout_page, post_task_and_bid, wait_for
from tests.tasks_market.conftest import Receiver
from tests.tasks_market.factories import text_artefact

BID = Decimal("150.00")  # post_task_and_bid's bid; the platform's fee is 10 % by default


def run_job(server: Server, job: str) -> str:
    """A beat job run now by the operator: its function in `manage.py shell`, with the server's environment."""
    module, _, name = job.rpartition(".")
    return server.manage("shell", "-c", f"from {module} import {name}\nprint('JOB-RESULT', {name}())")


def ledger_check(server: Server) -> str:
    output = server.manage("ledger_check")
    assert "ledger check passed" in output, output
    return output


class Seller(User):
    def earning(self, task_id: str) -> dict:
        [earning] = [e for e in self.call("GET", "/api/v1/payouts/earnings")["items"] if e["task_id"] == task_id]
        return earning

    def balance(self, currency: str = "usd") -> dict[str, Decimal]:
        [row] = [b for b in self.call("GET", "/api/v1/payouts/balance")["items"] if b["currency"] == currency]
        return {k: Decimal(v) for k, v in row.items() if k != "currency"}


def onboard(page, seller: Seller, name: str) -> None:
    """The owner starts onboarding and completes it on the hosted page with a test bank account."""
    started = seller.call("POST", "/api/v1/payouts/account", json={})
    assert started["account"]["status"] == "onboarding", started
    page.goto(started["onboarding_url"])
    page.fill("#display_name", name)
    page.fill("#routing_number", "110000000")
    page.fill("#account_number", "000123456789")
    page.click("#activate")
    page.wait_for_selector("#state")
    assert page.locator("#state").get_attribute("data-state") == "active"
    account = seller.call("GET", "/api/v1/payouts/account")
    assert (account["status"], account["payouts_enabled"], account["display_name"]) == ("active", True, name)


def delivered(page, poster: User, seller: Seller, agent_endpoint: Receiver) -> tuple[dict, str]:
    """A task the seller's agent won, the poster paid on the checkout page and the agent delivered; the task
    and its payment's id at the provider."""
    task, agent, bid = post_task_and_bid(poster, seller, agent_endpoint.url)
    assert (Decimal(bid["amount"]), Decimal(bid["fee"]), Decimal(bid["net"])) == (
        BID,
        Decimal("15.00"),
        Decimal("135.00"),
    )
    agent_endpoint.secret = agent["signing_secret"]
    selection = poster.call("POST", f"/api/v1/tasks/{task['id']}/bids/{bid['id']}/select")
    assert pay_on_the_checkout_page(page, selection["payment"]["checkout_url"]) == "paid"
    wait_for(lambda: poster.call("GET", f"/api/v1/tasks/{task['id']}")["status"] == "delivering")
    [dispatch] = wait_for(lambda: agent_endpoint.bodies("task.dispatched"), timeout=60)
    submitted = seller.call(
        "POST", dispatch["data"]["submit"]["path"], json={"artefacts": [text_artefact("Launch copy.")], "notes": "v1"}
    )
    assert submitted["task_status"] == "in_review"
    return task, selection["payment"]["provider_payment_id"]


def paid_out(server: Server, seller: Seller, task_id: str, net: Decimal) -> None:
    """The released earning: pending, then available (the settle job), then paid out (the payout job).

    `make run` holds nothing (EARNING_HOLD_DAYS=0) and its beat settles every five minutes, as may another
    test's settle job on the same server: the first read may already find the earning available."""
    earning = wait_for(lambda: seller.earning(task_id))
    assert (earning["status"], Decimal(earning["amount"])) in {("pending", net), ("available", net)}, earning
    if earning["status"] == "pending":
        assert seller.balance()["pending"] >= net

    run_job(server, "payments.tasks.settle_earnings")
    assert seller.earning(task_id)["status"] == "available"
    available = seller.balance()["available"]
    assert available >= net

    assert "payout(s) made" in server.manage("payouts_run")
    earning = wait_for(lambda: (e := seller.earning(task_id))["status"] == "paid_out" and e)
    payout = next(p for p in seller.call("GET", "/api/v1/payouts")["items"] if p["id"] == earning["payout_id"])
    assert (payout["status"], Decimal(payout["amount"])) == ("paid", available)
    balance = seller.balance()
    assert (balance["pending"], balance["available"]) == (0, 0)
    assert balance["paid_out"] >= net


@pytest.fixture
def browser_page():
    from playwright.sync_api import sync_playwright

    assert Path(CHROMIUM).exists(), "Debian's chromium is missing: `make test` installs it"
    with sync_playwright() as playwright:
        browser = playwright.chromium.launch(executable_path=CHROMIUM, args=CHROMIUM_ARGS, headless=True)
        yield browser.new_context(ignore_https_errors=True).new_page()
        browser.close()


@pytest.fixture
def agent_endpoint():
    receiver = Receiver()
    yield receiver
    receiver.close()


@pytest.fixture
def people(server, request) -> tuple[User, Seller]:
    tag = request.node.originalname.removeprefix("test_")[:20]
    mailed = mailed_verification_token(server)
    return User(server.base_url, f"money-poster-{tag}@example.com", mailed), Seller(
        server.base_url, f"money-seller-{tag}@example.com", mailed
    )


@pytest.mark.timeout(300)
@pytest.mark.parametrize("server", ["run"], indirect=True)
def test_approved_work_is_paid_out(server, scenario, people, browser_page, agent_endpoint):
    poster, seller = people
    onboard(browser_page, seller, "Copybot Ltd")
    task, _payment_id = delivered(browser_page, poster, seller, agent_endpoint)

    approved = poster.call("POST", f"/api/v1/tasks/{task['id']}/delivery/approve")
    assert approved["task_status"] == "completed"

    paid_out(server, seller, task["id"], Decimal("135.00"))
    ledger_check(server)
    scenario.effects.update(net="135.00", payout="paid")


@pytest.mark.timeout(300)
@pytest.mark.parametrize("server", ["run"], indirect=True)
def test_a_silent_poster_is_released_by_the_review_window(server, scenario, people, browser_page, agent_endpoint):
    poster, seller = people
    onboard(browser_page, seller, "Silent Copy Co")
    task, _payment_id = delivered(browser_page, poster, seller, agent_endpoint)

    assert "1 delivery released" in server.manage("release_reviewed", "--window-hours", "0")
    assert poster.call("GET", f"/api/v1/tasks/{task['id']}")["status"] == "completed"
    assert "0 deliveries released" in server.manage("release_reviewed", "--window-hours", "0")  # once

    paid_out(server, seller, task["id"], Decimal("135.00"))
    ledger_check(server)
    scenario.effects.update(released="review_window", payout="paid")


@pytest.mark.timeout(300)
@pytest.mark.parametrize("server", ["run"], indirect=True)
def test_a_dispute_split_refunds_the_poster_part_and_pays_the_seller_the_rest(
    server, scenario, people, browser_page, agent_endpoint
):
    poster, seller = people
    onboard(browser_page, seller, "Disputed Copy Co")
    task, payment_id = delivered(browser_page, poster, seller, agent_endpoint)
    disputed = poster.call(
        "POST", f"/api/v1/tasks/{task['id']}/delivery/dispute", json={"reason": "Half of it is off brief."}
    )
    assert disputed["task_status"] == "disputed"

    staff = httpx.Client(base_url=server.base_url, verify=False, timeout=30)
    email = create_user(server, staff=True, permissions=("tasks_market.add_disputeresolution",))
    token = staff.post("/api/v1/auth/token", json={"email": email, "password": PASSWORD}).json()["access"]
    staff.headers["Authorization"] = f"Bearer {token}"
    decision = {"outcome": "split", "refund_amount": "50.00", "note": "Half the copy was off brief."}
    path = f"/api/v1/disputes/{task['id']}/resolve"
    assert poster.http.post(path, json=decision).status_code == 403  # staff only
    resolved, again = staff.post(path, json=decision), staff.post(path, json=decision)

    assert resolved.status_code == again.status_code == 200, resolved.text
    body = resolved.json()
    assert again.json()["id"] == body["id"]  # applied once
    assert (body["status"], body["task_status"], body["reason"]) == ("applied", "completed", "Half of it is off brief.")
    assert [Decimal(body[k]) for k in ("refund_amount", "release_amount", "fee", "net")] == [
        Decimal("50.00"),
        Decimal("100.00"),
        Decimal("10.00"),
        Decimal("90.00"),
    ]
    # The poster's card got the refunded part back, at the provider.
    refunded = server.query(
        "from payments.models import LocalPayment\n"
        f"result = LocalPayment.objects.get(id={payment_id!r}).amount_refunded_minor"
    )
    assert refunded == 5000

    paid_out(server, seller, task["id"], Decimal("90.00"))
    ledger_check(server)
    # The task's own ledger lines: 150 captured = 50 refunded + 10 fee + 90 the seller's, nothing left held;
    # the seller's 90 leaves the platform's balance with the payout's own transfer (source payout:<id>).
    lines = server.query(
        "from payments.models import LedgerLine\n"
        f"rows = LedgerLine.objects.filter(source='task:{task['id']}').select_related('entry')\n"
        "result = [[line.entry.kind, line.account.rsplit(':', 1)[-1], str(line.amount)] for line in rows]"
    )
    totals: dict[str, Decimal] = {}
    for _, account, amount in lines:
        totals[account] = totals.get(account, Decimal(0)) + Decimal(amount)
    assert {k: v for k, v in totals.items() if v} == {
        "captured": Decimal("150"),
        "refunds": Decimal("-50"),
        # The money group: what is left in the platform's balance at the provider after the refund.
        "cash": Decimal("100"),
        "outside": Decimal("-100"),
        "fees": Decimal("-10"),
        "available": Decimal("-90"),  # settled; the payout's own entry moves it to paid_out
    }, lines
    staff.close()
    scenario.effects.update(refunded="50.00", net="90.00", payout="paid")
