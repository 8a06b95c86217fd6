"""What a security review saw from outside `make run`, each fixed and shown fixed over real HTTPS: a reset
ends the API keys of whoever held the account and lists what it left behind, a closed account's bids and
subscriptions stop, the demo inbox shows each user only their own deliveries, probing taken addresses
through an e-mail change is throttled, answers carrying tokens or per-user data are never cached, numbers
no double holds and wrong JSON types are 422s (never 500s), and staff without the permission cannot
resolve disputes. Each test makes its own users; run shape only (the mailed tokens are files under its
VAR_DIR, the inbox exists in the local profile only).
"""

from __future__ import annotations

import json
import re
import time
import uuid
from datetime import UTC, datetime, timedelta

import httpx
import pytest

from accounts.mail import newest_mail_to
from tests.e2e.harness import PASSWORD, Api, Server, create_user, login, mailed_verification_token, register

pytestmark = [pytest.mark.timeout(180), pytest.mark.parametrize("server", ["run"], indirect=True)]

MAILED_TOKEN = re.compile(r'"token": "([^"]+)"')
NEVER_FIRED = ["team.reactivated"]  # no test here reactivates a team: nothing is delivered
LOGIN_CLIENT_LIMIT, LOGIN_WINDOW = 30, 15 * 60  # accounts/throttle.py; docs/decisions.md#security
OTHER_CLIENT = "127.0.0.2"  # loopback, but not the 127.0.0.1 whose rate limits the harness lifted


def mailed_token(server: Server, address: str, subject: str, timeout: float = 20.0) -> str:
    """The token in the newest mail with this subject to `address`, polled until the worker has written it."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        body = newest_mail_to(server.var_dir / "mail", address, subject)
        if body and (found := MAILED_TOKEN.search(body)):
            return found[1]
        time.sleep(0.1)
    raise AssertionError(f"no mail {subject!r} to {address} in {server.var_dir / 'mail'}")


def mail_body(server: Server, address: str, subject: str, timeout: float = 20.0) -> str:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if body := newest_mail_to(server.var_dir / "mail", address, subject):
            return body
        time.sleep(0.1)
    raise AssertionError(f"no mail {subject!r} to {address} in {server.var_dir / 'mail'}")


def new_user(server: Server, scenario) -> tuple[str, Api]:
    email, access = register(Api(server, scenario))
    return email, Api(server, scenario, access)


def expect(response: httpx.Response, status: int, code: str | None = None) -> dict:
    assert response.status_code == status, f"{response.status_code} {response.text}"
    body = response.json() if response.content else {}
    if code is not None:
        assert body.get("code") == code, body
    return body


def inbox_url(server: Server) -> str:
    """An address of the local webhook inbox (this server's own origin, which the local profile may call)."""
    return f"{server.base_url}/demo/inbox/trust-{uuid.uuid4().hex[:10]}"


def subscribe(api: Api, url: str, events: list[str] = NEVER_FIRED) -> dict:
    return expect(api.post("/api/v1/webhooks/subscriptions", json={"url": url, "events": events}), 201)


def task_body(**overrides) -> dict:
    return {
        "title": "Name our cold brew",
        "description": "Ten names for a cold brew, short and friendly.",
        "budget_amount": "200.00",
        "budget_currency": "usd",
        "deadline": (datetime.now(UTC) + timedelta(days=7)).isoformat(),
        "category": "design",  # not one the demo agent bids on (docs/guide.md#the-marketplace)
        "requirements": ["plain English"],
        **overrides,
    }


def test_a_reset_ends_every_api_key_and_lists_what_was_left_behind(server, scenario):
    """docs/decisions.md#identity-and-authentication: a reset revokes the API keys with the sessions, and
    `review_after_recovery` lists the webhook subscriptions made before it."""
    email, access = register(Api(server, scenario))
    user = Api(server, scenario, access)
    # Until the address is verified, no API key (a key outlives every session).
    expect(user.post("/api/v1/auth/api-keys", json={"name": "early"}), 403, "email_unverified")
    verified = user.post("/api/v1/auth/email/verify", json={"token": mailed_verification_token(server)(email)})
    assert verified.status_code == 200 and verified.json()["email_verified"] is True, verified.text

    issued = expect(user.post("/api/v1/auth/api-keys", json={"name": "left behind"}), 201)
    assert issued["key"].startswith("bmk_"), issued
    keyed = Api(server, scenario, issued["key"])
    hook_url = inbox_url(server)
    hook = subscribe(keyed, hook_url)  # what whoever held the key leaves behind
    for path, params in (("/api/v1/tasks", {"scope": "mine"}), ("/api/v1/webhooks/subscriptions", {})):
        expect(keyed.get(path, params=params), 200)
    assert expect(user.get("/api/v1/auth/me"), 200)["review_after_recovery"] is None

    anonymous = Api(server, scenario)
    expect(anonymous.post("/api/v1/auth/password/reset", json={"email": email}), 202)
    reset_token = mailed_token(server, email, "Reset your password")
    new_password = "recovered pass phrase " + uuid.uuid4().hex[:6]
    confirm = {"token": reset_token, "new_password": new_password}
    expect(anonymous.post("/api/v1/auth/password/reset/confirm", json=confirm), 204)

    for path, params in (("/api/v1/tasks", {"scope": "mine"}), ("/api/v1/webhooks/subscriptions", {})):
        expect(keyed.get(path, params=params), 401)
    expect(user.get("/api/v1/auth/me"), 401)  # the session from before the reset, too
    fresh = expect(anonymous.post("/api/v1/auth/token", json={"email": email, "password": new_password}), 200)
    me = expect(Api(server, scenario, fresh["access"]).get("/api/v1/auth/me"), 200)
    review = me["review_after_recovery"]
    assert review is not None, me
    assert {"kind": "webhook_subscription", "id": hook["id"], "url": hook_url} in review["items"], review
    notice = mail_body(server, email, "Your password was reset")
    assert f"{hook['id']}: {hook_url}" in notice, notice
    scenario.effects.update(old_key="401 after reset", review_items=len(review["items"]))


def test_closing_an_account_withdraws_its_bids_and_disables_its_subscriptions(server, scenario):
    """docs/decisions.md#closing-an-account: the closed seller's pending bid is withdrawn (the poster cannot
    select it) and its webhook subscriptions are disabled."""
    _, poster = new_user(server, scenario)
    seller_email, seller = new_user(server, scenario)
    agent = expect(
        seller.post(
            "/api/v1/agents",
            json={"name": "Closing agent", "description": "e2e", "endpoint_url": inbox_url(server)},
        ),
        201,
    )
    subscription = subscribe(seller, inbox_url(server))
    task = expect(poster.post("/api/v1/tasks", json=task_body()), 201)
    bid = expect(
        seller.post(
            f"/api/v1/tasks/{task['id']}/bids",
            json={
                "agent_id": agent["id"],
                "amount": "150.00",
                "currency": "usd",
                "proposal": "Ten names by tomorrow.",
                "eta_hours": 24,
            },
        ),
        201,
    )

    expect(seller.request("DELETE", "/api/v1/auth/me", json={"current_password": PASSWORD}), 204)

    bids = expect(poster.get(f"/api/v1/tasks/{task['id']}/bids"), 200)["items"]
    assert [(b["id"], b["status"]) for b in bids] == [(bid["id"], "withdrawn")], bids
    expect(poster.post(f"/api/v1/tasks/{task['id']}/bids/{bid['id']}/select", json={}), 409, "invalid_state")
    assert expect(poster.get(f"/api/v1/tasks/{task['id']}"), 200)["status"] == "open"
    expect(seller.get("/api/v1/auth/me"), 401)
    expect(Api(server, scenario).post("/api/v1/auth/token", json={"email": seller_email, "password": PASSWORD}), 401)
    # The closed seller can no longer look; what its subscription became is read on the machine.
    state = server.query(
        "from webhooks_app.models import WebhookSubscription\n"
        f"s = WebhookSubscription.objects.get(pk={subscription['id']!r})\n"
        "result = [s.is_active, s.disabled_reason]"
    )
    assert state == [False, "The account was closed."], state
    scenario.effects.update(bid="withdrawn", select=409, subscription="disabled")


def test_the_demo_inbox_shows_each_user_only_their_own_deliveries(server, scenario):
    """docs/decisions.md#the-local-webhook-inbox: reading needs a token (or the admin's login for the page),
    and each owner sees only what their own subscription's secret signed, as the worker delivered it."""
    url = inbox_url(server)
    path = url.removeprefix(server.base_url)
    anonymous = Api(server, scenario)
    expect(anonymous.get(path), 401, "not_authenticated")
    page = anonymous.get("/demo/inbox")
    assert page.status_code == 302 and page.headers["location"].startswith("/admin/login/"), page.headers
    invalid = {"Authorization": "Bearer not-a-token"}
    expect(anonymous.get(path, headers=invalid), 401)
    assert anonymous.get("/demo/inbox", headers=invalid).status_code == 401

    (_, alice), (_, bob), (_, carol) = (new_user(server, scenario) for _ in range(3))
    subscribe(alice, url, ["task.created"])
    subscribe(bob, url, ["task.created"])
    titles = {"alice": f"Task of Alice {uuid.uuid4().hex[:6]}", "bob": f"Task of Bob {uuid.uuid4().hex[:6]}"}
    expect(alice.post("/api/v1/tasks", json=task_body(title=titles["alice"])), 201)
    expect(bob.post("/api/v1/tasks", json=task_body(title=titles["bob"])), 201)
    # Anyone may post to an inbox; what none of its receivers' secrets signed is kept and shown to nobody.
    forged = anonymous.post(
        path,
        content=json.dumps({"type": "task.created", "data": {}}),
        headers={
            "Content-Type": "application/json",
            "webhook-id": "msg_forged",
            "webhook-timestamp": str(int(time.time())),
            "webhook-signature": "v1,Zm9yZ2Vk",
        },
    )
    expect(forged, 401, "invalid_signature")

    def seen_by(api: Api) -> list[dict]:
        listed = api.get(path)
        assert listed.status_code == 200, listed.text
        assert "no-store" in listed.headers.get("cache-control", ""), listed.headers
        return listed.json()["items"]

    deadline = time.monotonic() + 45
    while time.monotonic() < deadline and not (seen_by(alice) and seen_by(bob)):
        time.sleep(0.5)
    for name, api in (("alice", alice), ("bob", bob)):
        items = seen_by(api)
        assert len(items) == 1, (name, items)
        [item] = items
        assert (item["type"], item["signature_verified"]) == ("task.created", True), item
        assert titles[name] in item["body"], item
        assert titles["bob" if name == "alice" else "alice"] not in item["body"], item
    assert seen_by(carol) == []
    page = carol.get("/demo/inbox")
    assert page.status_code == 200 and titles["alice"] not in page.text and titles["bob"] not in page.text
    page = alice.get("/demo/inbox")
    assert page.status_code == 200 and titles["alice"] in page.text and titles["bob"] not in page.text
    scenario.effects.update(anonymous=401, each_sees="own delivery only", forged="shown to nobody")


def test_probing_taken_addresses_through_an_email_change_is_throttled(server, scenario):
    """docs/decisions.md#security: each 409 for a taken address costs the client a failed login, so after
    30 in a window the client gets 429. Sent from 127.0.0.2: the harness lifted 127.0.0.1's limits."""
    taken, _ = new_user(server, scenario)
    _, prober_token = register(Api(server, scenario))
    prober = Api(server, scenario, prober_token)
    prober.client.close()
    prober.client = httpx.Client(
        base_url=server.base_url,
        timeout=60,
        headers={"Authorization": f"Bearer {prober_token}"},
        transport=httpx.HTTPTransport(verify=False, local_address=OTHER_CLIENT),
    )
    # The counters are fixed 15-minute windows: start well inside one, so that all the tries fall in it.
    left = LOGIN_WINDOW - time.time() % LOGIN_WINDOW
    if left < 45:
        time.sleep(left + 1)
    body = {"email": taken, "current_password": PASSWORD}
    answers = []
    for _ in range(LOGIN_CLIENT_LIMIT + 1):
        answers.append(prober.patch("/api/v1/auth/me", json=body))
        if answers[-1].status_code != 409:
            break

    assert [a.status_code for a in answers] == [409] * LOGIN_CLIENT_LIMIT + [429], [a.text for a in answers[-2:]]
    assert answers[0].json()["code"] == "email_taken", answers[0].text
    assert answers[-1].json()["code"] == "rate_limited", answers[-1].text
    assert 1 <= int(answers[-1].headers["retry-after"]) <= LOGIN_WINDOW, answers[-1].headers
    # The address was never changed.
    assert expect(prober.get("/api/v1/auth/me"), 200)["email"] != taken
    prober.close()
    scenario.effects.update(conflicts=LOGIN_CLIENT_LIMIT, then=429)


def test_answers_with_tokens_or_per_user_data_are_never_cached(server, scenario):
    """docs/decisions.md#caching-of-api-responses: `Cache-Control: no-store` and `Vary: Authorization`."""
    email, access = register(Api(server, scenario))
    anonymous = Api(server, scenario)
    answers = {
        "token": anonymous.post("/api/v1/auth/token", json={"email": email, "password": PASSWORD}),
        "me": Api(server, scenario, access).get("/api/v1/auth/me"),
        "me without a token": anonymous.get("/api/v1/auth/me"),
    }
    assert [a.status_code for a in answers.values()] == [200, 200, 401], answers
    for name, answer in answers.items():
        cache_control = {d.strip().lower() for d in answer.headers.get("cache-control", "").split(",")}
        vary = {v.strip().lower() for line in answer.headers.get_list("vary") for v in line.split(",")}
        assert "no-store" in cache_control, (name, answer.headers)
        assert "authorization" in vary, (name, answer.headers)
    scenario.effects.update(checked=len(answers))


def test_numbers_out_of_range_and_wrong_json_types_are_422_not_500(server, scenario):
    """docs/decisions.md#errors: a number no double holds is `json_invalid` at its offset, wrong types are
    the field's own 422, and nothing is created."""
    _, user = new_user(server, scenario)
    raw = json.dumps(task_body(budget_amount="BUDGET")).replace('"BUDGET"', "1e400")
    created = user.post("/api/v1/tasks", content=raw, headers={"Content-Type": "application/json"})
    assert expect(created, 422)["detail"] == [
        {
            "type": "json_invalid",
            "loc": ["body", raw.index("1e400")],
            "msg": "JSON decode error",
            "input": {},
            "ctx": {"error": "number out of range: 1e400"},
        }
    ], created.text
    for wrong in (True, {"$gt": 0}, [1]):
        refused = expect(user.post("/api/v1/tasks", json=task_body(budget_amount=wrong)), 422)
        assert [e["loc"] for e in refused["detail"]] == [["body", "budget_amount"]], refused
    refused = expect(user.post("/api/v1/tasks", json=[task_body()]), 422)
    assert refused["detail"][0]["loc"] == ["body"], refused
    assert expect(user.get("/api/v1/tasks", params={"scope": "mine"}), 200)["items"] == []

    simulation = {
        "platform": "google",
        "current_daily_budget": 100,
        "current_metrics": {"cpc": 2, "ctr": 0.05, "conversion_rate": 0.1, "avg_order_value": 50},
        "budget_scenarios": [50, "HUGE"],
    }
    raw = json.dumps(simulation).replace('"HUGE"', "-2.5E+999")
    simulated = user.post("/api/v1/ads/simulate", content=raw, headers={"Content-Type": "application/json"})
    [problem] = expect(simulated, 422)["detail"]
    assert (problem["type"], problem["loc"]) == ("json_invalid", ["body", raw.index("-2.5E+999")]), problem
    assert problem["ctx"] == {"error": "number out of range: -2.5E+999"}, problem
    wrong_type = expect(user.post("/api/v1/ads/simulate", json={**simulation, "budget_scenarios": [50, "a lot"]}), 422)
    assert [(e["type"], e["loc"]) for e in wrong_type["detail"]] == [("float_parsing", ["body", "budget_scenarios", 1])]
    extreme = {**simulation, "budget_scenarios": [50], "current_metrics": {**simulation["current_metrics"]}}
    extreme["current_metrics"].update(cpc=1e-300, ctr=1e-300)
    [problem] = expect(user.post("/api/v1/ads/simulate", json=extreme), 422)["detail"]
    assert (problem["type"], problem["loc"]) == ("value_error", ["body"]), problem
    assert scenario.server_errors() == {}, scenario.statuses
    scenario.effects.update(tasks_created=0)


def test_staff_without_the_permission_cannot_resolve_a_dispute(server, scenario):
    """docs/decisions.md#staff-permissions: `is_staff` opens the door, the permission decides; the check
    runs before the task is looked up, so any task id is refused alike."""
    staff = Api(server, scenario, login(Api(server, scenario), create_user(server, staff=True)))
    _, plain = new_user(server, scenario)
    decision = {"decision": "refund_full", "note": "e2e"}
    for task_id in (uuid.uuid4(), uuid.uuid4()):
        refused = expect(staff.post(f"/api/v1/disputes/{task_id}/resolve", json=decision), 403, "permission_denied")
        assert "tasks_market.add_disputeresolution" in refused["detail"], refused
        expect(plain.post(f"/api/v1/disputes/{task_id}/resolve", json=decision), 403, "permission_denied")
    assert expect(staff.get("/api/v1/auth/me"), 200)["is_staff"] is True
    scenario.effects.update(staff_without_permission=403)


def test_an_address_is_mailed_as_given_with_its_domain_in_idna_2008(server, scenario):
    """`Ann@Faß.de` is mailed at `xn--fa-hia.de` (IDNA 2008), never at `fass.de`, another registrable domain; the
    local part keeps its case; `fass.de` is another account (docs/decisions.md#identity-and-authentication)."""
    import email
    from email import policy

    local = f"Ann-{uuid.uuid4().hex[:8]}"
    api = Api(server, scenario)
    expect(api.post("/api/v1/auth/register", json={"email": f"{local}@Faß.de", "password": PASSWORD}), 201)

    deadline, recipients = time.monotonic() + 20, []
    while time.monotonic() < deadline and not recipients:
        for path in (server.var_dir / "mail").glob("*.eml"):
            message = email.message_from_bytes(path.read_bytes(), policy=policy.default)
            recipients += [str(to.addr_spec) for to in message["To"].addresses if local.lower() in str(to).lower()]
        time.sleep(0.1)
    assert recipients and set(recipients) == {f"{local}@xn--fa-hia.de"}, recipients

    expect(api.post("/api/v1/auth/register", json={"email": f"{local}@fass.de", "password": PASSWORD}), 201)
    signed_in = api.post("/api/v1/auth/token", json={"email": f"{local.upper()}@FAß.DE", "password": PASSWORD})
    me = expect(Api(server, scenario, expect(signed_in, 200)["access"]).get("/api/v1/auth/me"), 200)
    assert me["email"] == f"{local}@Faß.de"
