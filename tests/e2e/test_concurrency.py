"""Concurrent clients against the real server, on `make run` and on `make serve` (docs/decisions.md#states).

Each scenario drives the server over HTTPS only, releases its concurrent requests together with a
barrier, and asserts no 5xx, exactly-once effects, and that every acknowledged write is there after.

On the production shape the outbound address checks resolve hosts in DNS and refuse loopback, so the
agents bidding there are registered on the machine with `manage.py shell` (their endpoint
`https://agent.invalid/hook` never resolves, so no dispatch leaves the machine), and the webhook
subscriptions point at a public address for an event these scenarios never cause.
"""

from __future__ import annotations

import random
import threading
import time
import uuid
from datetime import UTC, datetime, timedelta

import httpx
import pytest

from tests.e2e.harness import Api, Receiver, create_user, login, register, signed_event, statuses, together

pytestmark = pytest.mark.timeout(600)

PUBLIC_HOOK_URL = "https://192.88.99.1/e2e-never-called"  # public, accepted in production; never called
NEVER_FIRED = ["team.reactivated"]  # no scenario reactivates a team


def no_server_errors(scenario) -> None:
    assert scenario.server_errors() == {}, f"5xx or transport errors: {dict(scenario.statuses)}"


def task_body(**overrides) -> dict:
    deadline = (datetime.now(UTC) + timedelta(days=7)).isoformat()
    return {
        "title": "Write launch copy for our analytics dashboard",
        "description": "Announce the new analytics dashboard to marketing teams; friendly tone.",
        "budget_amount": "200.00",
        "budget_currency": "usd",
        "deadline": deadline,
        "category": "content",
        "requirements": ["Under 300 words"],
        **overrides,
    }


def bid_body(agent_id: str) -> dict:
    return {
        "agent_id": agent_id,
        "amount": "150.00",
        "currency": "usd",
        "proposal": "Friendly launch copy for the analytics dashboard, with the free trial up front.",
        "eta_hours": 24,
    }


def make_agents(server, bidder: Api, bidder_email: str, count: int, endpoint: str | None) -> list[str]:
    if server.shape == "run":
        made = [
            bidder.post("/api/v1/agents", json={"name": f"Agent {i}", "description": "e2e", "endpoint_url": endpoint})
            for i in range(count)
        ]
        assert [r.status_code for r in made] == [201] * count, made[0].text
        return [r.json()["id"] for r in made]
    return server.query(
        "from accounts.models import User\n"
        "from tasks_market.services.agents import agent_register\n"
        f"owner = User.objects.get(email={bidder_email!r})\n"
        "result = [str(agent_register(owner=owner, name=f'Agent {i}', endpoint_url='https://agent.invalid/hook').id)"
        f" for i in range({count})]"
    )


def open_task_with_bids(server, scenario, count: int, endpoint: str | None):
    anonymous = Api(server, scenario)
    _, poster_token = register(anonymous)
    bidder_email, bidder_token = register(anonymous)
    poster, bidder = Api(server, scenario, poster_token), Api(server, scenario, bidder_token)
    task = poster.post("/api/v1/tasks", json=task_body())
    assert task.status_code == 201, task.text
    task_id = task.json()["id"]
    agents = make_agents(server, bidder, bidder_email, count, endpoint)
    bids = [bidder.post(f"/api/v1/tasks/{task_id}/bids", json=bid_body(agent)) for agent in agents]
    assert [b.status_code for b in bids] == [201] * count, bids[0].text
    return poster_token, poster, task_id, [b.json()["id"] for b in bids]


def warmed(server, scenario, token: str | None, count: int) -> list[Api]:
    clients = [Api(server, scenario, token) for _ in range(count)]
    for client in clients:
        client.warm()
    return clients


@pytest.fixture
def receiver(server):
    if server.shape != "run":
        yield None
        return
    made = Receiver()
    yield made
    made.close()


def test_concurrent_selects_of_one_task(server, scenario, receiver):
    n = 12
    token, poster, task_id, bid_ids = open_task_with_bids(server, scenario, n, receiver and receiver.url)
    clients = warmed(server, scenario, token, n)

    results = together(
        [
            lambda c=c, b=b: c.post(f"/api/v1/tasks/{task_id}/bids/{b}/select")
            for c, b in zip(clients, bid_ids, strict=True)
        ]
    )

    counts = statuses(results)
    winners = [bid_ids[i] for i, r in enumerate(results) if getattr(r, "status_code", None) == 200]
    task = poster.get(f"/api/v1/tasks/{task_id}").json()
    bids = poster.get(f"/api/v1/tasks/{task_id}/bids", params={"limit": 100}).json()["items"]
    payments = server.query(
        f"from payments.models import Payment\nresult = Payment.objects.filter(source='task:' + {task_id!r}).count()"
    )
    scenario.effects.update(
        winners=len(winners),
        selected_bids=sum(b["status"] == "selected" for b in bids),
        payments=payments,
        task=task["status"],
    )
    no_server_errors(scenario)
    assert counts == {200: 1, 409: n - 1}, counts
    assert (task["status"], task["selected_bid_id"]) == ("awaiting_payment", winners[0])
    assert [b["id"] for b in bids if b["status"] == "selected"] == winners
    assert payments == 1


def test_concurrent_copies_of_one_payment_event(server, scenario, receiver):
    _, poster, task_id, (bid_id,) = open_task_with_bids(server, scenario, 1, receiver and receiver.url)
    selected = poster.post(f"/api/v1/tasks/{task_id}/bids/{bid_id}/select")
    assert selected.status_code == 200, selected.text
    payment = selected.json()["payment"]
    # The poster pays at the (local) provider, whose own event is not sent: the test sends its copies. (A
    # success the provider never saw would be money the books have and the provider not: the reconciliation
    # that ledger_check runs on this server would rightly refuse it.)
    server.query(
        "from payments.providers.local import LocalPaymentProvider\n"
        f"LocalPaymentProvider().simulate_payment({payment['provider_payment_id']!r}, 'succeeded')\n"
        "result = 1"
    )
    body, headers = signed_event(
        "payment_intent.succeeded",
        {
            "id": payment["provider_payment_id"],
            "object": "payment_intent",
            "status": "succeeded",
            "amount": 15000,
            "currency": "usd",
            "metadata": {"task_id": task_id, "bid_id": bid_id},
        },
    )
    n = 10
    clients = warmed(server, scenario, None, n)

    results = together(
        [lambda c=c: c.post("/api/v1/webhooks/payments", content=body, headers=headers) for c in clients]
    )

    outcomes = sorted(r.json().get("status") for r in results if isinstance(r, httpx.Response) and r.status_code == 200)
    task = poster.get(f"/api/v1/tasks/{task_id}").json()
    delivery = poster.get(f"/api/v1/tasks/{task_id}/delivery")
    effects = server.query(
        "from payments.models import Payment\nfrom tasks_market.models import Delivery\n"
        f"result = {{'deliveries': Delivery.objects.filter(task_id={task_id!r}).count(),"
        f" 'succeeded_payments': Payment.objects.filter(source='task:' + {task_id!r}, status='succeeded').count()}}"
    )
    dispatches = 0
    if receiver is not None:  # the agent's endpoint gets the task once (the worker dispatches it)
        deadline = time.monotonic() + 60
        while time.monotonic() < deadline and not receiver.requests:
            time.sleep(0.5)
        time.sleep(3)
        dispatches = len({r["headers"].get("webhook-id") for r in receiver.requests})
    scenario.effects.update(
        processed=outcomes.count("processed"),
        duplicate=outcomes.count("duplicate"),
        task=task["status"],
        dispatches=dispatches,
        **effects,
    )
    no_server_errors(scenario)
    assert statuses(results) == {200: n}, statuses(results)
    assert outcomes == ["duplicate"] * (n - 1) + ["processed"], outcomes
    assert task["status"] == "delivering"
    assert delivery.status_code == 200, delivery.text
    assert effects == {"deliveries": 1, "succeeded_payments": 1}
    if receiver is not None:
        assert dispatches == 1, receiver.bodies()


def test_concurrent_image_generations_against_a_small_balance(server, scenario):
    balance, n = 5, 12
    anonymous = Api(server, scenario)
    token = login(anonymous, create_user(server, credits=balance))
    user = Api(server, scenario, token)
    models = user.get("/api/v1/allmodelchat/models", params={"limit": 100}).json()["items"]
    cost = next(m["credit_cost"] for m in models if m["default"])
    clients = warmed(server, scenario, token, n)
    seen: list[int] = []
    storm_over = threading.Event()

    def watch_balance():
        watcher = Api(server, scenario, token)
        while not storm_over.is_set():
            seen.append(watcher.get("/api/v1/allmodelchat/credits").json()["credits"])
            time.sleep(0.05)

    watching = threading.Thread(target=watch_balance)
    watching.start()
    body = {"prompt": "A lighthouse at dawn, teal and orange", "conversation_id": str(uuid.uuid4())}
    try:
        results = together([lambda c=c: c.post("/api/v1/allmodelchat/generate/image", json=body) for c in clients])
    finally:
        storm_over.set()
        watching.join()

    counts = statuses(results)
    after = user.get("/api/v1/allmodelchat/credits").json()["credits"]
    successes = counts.get(200, 0)
    scenario.effects.update(images=successes, balance_before=balance, balance_after=after, lowest_seen=min(seen))
    no_server_errors(scenario)
    assert counts == {200: balance // cost, 402: n - balance // cost}, counts
    assert after == balance - successes * cost >= 0
    assert min(seen) >= 0


def list_all(api: Api, path: str, **params) -> list[dict]:
    items, offset = [], 0
    while True:
        page = api.get(path, params={**params, "limit": 100, "offset": offset})
        assert page.status_code == 200, page.text
        body = page.json()
        items += body["items"]
        if not body["has_more"]:
            return items
        offset += len(body["items"])


def subscription_url(server, receiver) -> str:
    return receiver.url if receiver is not None else PUBLIC_HOOK_URL


def test_concurrent_writes_from_several_users(server, scenario, receiver):
    users, anonymous = 4, Api(server, scenario)
    tokens = [register(anonymous)[1] for _ in range(users)]
    hook = subscription_url(server, receiver)
    creates = []  # (user index, kind, path, body)
    for index in range(users):
        for i in range(4):
            creates.append((index, "brands", "/api/v1/brands", {"name": f"Brand {index}-{i}"}))
        for _ in range(3):
            creates.append((index, "tasks", "/api/v1/tasks", task_body()))
        for _ in range(3):
            creates.append(
                (index, "subscriptions", "/api/v1/webhooks/subscriptions", {"url": hook, "events": NEVER_FIRED})
            )
    clients = [Api(server, scenario, tokens[c[0]]) for c in creates]
    for client in clients:
        client.warm()

    created = together([lambda c=c, w=w: c.post(w[2], json=w[3]) for c, w in zip(clients, creates, strict=True)])
    acked = [
        (w[0], w[1], r.json()["id"])
        for w, r in zip(creates, created, strict=True)
        if getattr(r, "status_code", 0) == 201
    ]
    brands = [(user, brand_id) for user, kind, brand_id in acked if kind == "brands"]
    patchers = [Api(server, scenario, tokens[user]) for user, _ in brands]
    for client in patchers:
        client.warm()
    renamed = together(
        [
            lambda c=c, b=b: c.patch(f"/api/v1/brands/{b}", json={"name": f"Renamed {b}"})
            for c, (_, b) in zip(patchers, brands, strict=True)
        ]
    )
    renamed_ok = {b for (u, b), r in zip(brands, renamed, strict=False) if getattr(r, "status_code", 0) == 200}

    missing, stale = [], []
    for index, token in enumerate(tokens):
        owner = Api(server, scenario, token)
        listed = {
            "brands": {b["id"]: b for b in list_all(owner, "/api/v1/brands")},
            "tasks": {t["id"]: t for t in list_all(owner, "/api/v1/tasks", scope="mine")},
            "subscriptions": {s["id"]: s for s in list_all(owner, "/api/v1/webhooks/subscriptions")},
        }
        missing += [(kind, oid) for user, kind, oid in acked if user == index and oid not in listed[kind]]
        stale += [
            b
            for u, b in brands
            if u == index and b in renamed_ok and listed["brands"].get(b, {}).get("name") != f"Renamed {b}"
        ]
    scenario.effects.update(
        acked_creates=len(acked), acked_patches=len(renamed_ok), missing=len(missing), stale=len(stale)
    )
    no_server_errors(scenario)
    assert statuses(created) == {201: len(creates)}, statuses(created)
    assert statuses(renamed) == {200: len(brands)}, statuses(renamed)
    assert missing == [] and stale == []


def test_mixed_load_for_thirty_seconds(server, scenario, receiver):
    threads, duration, anonymous = 8, 30.0, Api(server, scenario)
    tokens = [register(anonymous)[1] for _ in range(threads // 2)]
    if receiver is not None:  # the worker delivers every task.created to the owner's receiver meanwhile
        for token in tokens:
            made = Api(server, scenario, token).post(
                "/api/v1/webhooks/subscriptions", json={"url": receiver.url, "events": ["task.created"]}
            )
            assert made.status_code == 201, made.text
    acked: list[tuple[int, str, str]] = []  # (user, kind, id)
    names: dict[str, str] = {}  # brand id -> last acknowledged name (each brand is written by one thread)
    lock = threading.Lock()
    deadline = time.monotonic() + duration

    def work(number: int) -> None:
        user = number % len(tokens)
        api, rng, mine = Api(server, scenario, tokens[user]), random.Random(number), []
        while time.monotonic() < deadline:
            roll = rng.random()
            if roll < 0.2:
                r = api.post("/api/v1/brands", json={"name": f"Load {number}-{rng.randrange(10**6)}"})
                if r.status_code == 201:
                    mine.append(r.json()["id"])
                    with lock:
                        acked.append((user, "brands", r.json()["id"]))
                        names[r.json()["id"]] = r.json()["name"]
            elif roll < 0.35:
                r = api.post("/api/v1/tasks", json=task_body())
                if r.status_code == 201:
                    with lock:
                        acked.append((user, "tasks", r.json()["id"]))
            elif roll < 0.5 and mine:
                brand, name = rng.choice(mine), f"Renamed {number}-{rng.randrange(10**6)}"
                if api.patch(f"/api/v1/brands/{brand}", json={"name": name}).status_code == 200:
                    with lock:
                        names[brand] = name
            elif roll < 0.7:
                api.get("/api/v1/brands", params={"limit": 20})
            elif roll < 0.85:
                api.get("/api/v1/tasks", params={"scope": "open", "limit": 20})
            else:
                api.get("/api/v1/allmodelchat/credits")

    workers = [threading.Thread(target=work, args=(i,)) for i in range(threads)]
    started = time.monotonic()
    for worker in workers:
        worker.start()
    for worker in workers:
        worker.join()
    elapsed = time.monotonic() - started

    missing, stale = [], []
    for index, token in enumerate(tokens):
        owner = Api(server, scenario, token)
        brands = {b["id"]: b["name"] for b in list_all(owner, "/api/v1/brands")}
        tasks = {t["id"] for t in list_all(owner, "/api/v1/tasks", scope="mine")}
        for user, kind, oid in acked:
            if user == index and oid not in (brands if kind == "brands" else tasks):
                missing.append((kind, oid))
            if user == index and kind == "brands" and oid in brands and brands[oid] != names[oid]:
                stale.append(oid)
    task_ids = {oid for _, kind, oid in acked if kind == "tasks"}
    hooked = set()
    if receiver is not None:  # until all arrived, or nothing new arrived for 30 s (the worker is slow, not lost)
        last_change, count = time.monotonic(), -1
        while time.monotonic() - last_change < 30:
            hooked = {b["data"].get("task_id") for b in receiver.bodies() if b.get("type") == "task.created"}
            if task_ids <= hooked:
                break
            if len(hooked) != count:
                last_change, count = time.monotonic(), len(hooked)
            time.sleep(1)
    scenario.effects.update(
        seconds=round(elapsed),
        acked_writes=len(acked),
        tasks=len(task_ids),
        webhooks_for_tasks=len(task_ids & hooked),
        missing=len(missing),
        stale=len(stale),
    )
    no_server_errors(scenario)
    assert elapsed >= duration
    assert len(acked) > 0
    assert missing == [] and stale == []
    if receiver is not None:
        assert task_ids <= hooked, f"{len(task_ids - hooked)} task.created events never reached the receiver"
