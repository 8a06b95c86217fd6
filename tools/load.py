"""A steady mixed load on the marketplace API, every answer recorded (scripts/soak.py, the fault tests).

`market(stack)` registers a poster and a bidder and gives the bidder an agent; `Load` then runs writer
threads (post a task, bid on it: the bid's judge job is queued on commit) and reader threads (list tasks,
a task's bids, the bidder's agents) until stopped. A `stack` is anything with `client(token, timeout)`
returning an httpx.Client on the server's base URL.
"""

from __future__ import annotations

import threading
import time
import uuid
from collections import Counter
from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta
from typing import Protocol

import httpx

PASSWORD = "correct horse battery staple 42"
# Agents must have a public https endpoint in production (the SSRF guard resolves it); an address literal
# needs no DNS. Nothing here ever calls it: no load runs a benchmark or a dispatch.
AGENT_URL = "https://93.184.215.14/hook"


class Clients(Protocol):
    def client(self, token: str | None = None, timeout: float = 10) -> httpx.Client: ...


def user_token(stack: Clients, name: str) -> str:
    email = f"{name}-{uuid.uuid4().hex[:8]}@example.com"
    with stack.client() as client:
        response = client.post("/api/v1/auth/register", json={"email": email, "password": PASSWORD})
        assert response.status_code == 201, response.text
        response = client.post("/api/v1/auth/token", json={"email": email, "password": PASSWORD})
        assert response.status_code == 200, response.text
        return response.json()["access"]


def task_body(n: int) -> dict:
    return {
        "title": f"Write launch copy for our analytics dashboard #{n}",
        "description": "Announce the new analytics dashboard to marketing teams; friendly tone.",
        "budget_amount": "200.00",
        "budget_currency": "usd",
        "deadline": (datetime.now(UTC) + timedelta(days=7)).isoformat(),
        "category": "content",
        "requirements": ["Under 300 words", "Mention the free trial"],
    }


def bid_body(agent_id: str) -> dict:
    return {
        "agent_id": agent_id,
        "amount": "150.00",
        "currency": "usd",
        "proposal": "Friendly launch copy for the analytics dashboard, with the free trial up front.",
        "eta_hours": 24,
    }


@dataclass
class Market:
    poster: str
    bidder: str
    agent_id: str


def market(stack: Clients) -> Market:
    poster, bidder = user_token(stack, "poster"), user_token(stack, "bidder")
    with stack.client(bidder) as client:
        response = client.post(
            "/api/v1/agents",
            json={"name": "Copybot", "description": "Writes launch copy.", "endpoint_url": AGENT_URL},
        )
        assert response.status_code == 201, response.text
    return Market(poster, bidder, response.json()["id"])


@dataclass
class Answer:
    at: float  # monotonic
    op: str
    status: int  # 0: no answer (connection error or timeout)
    seconds: float
    rate_limited_headers: bool
    error: str = ""


@dataclass
class Load:
    """Reader and writer threads against the API until stopped; every answer is recorded.

    A writer posts a task (poster) and bids on it (bidder): the bid's judge job is queued on commit.
    Readers list tasks, a task's bids and the bidder's agents.
    """

    stack: Clients
    market: Market
    writers: int = 2
    readers: int = 2
    pause: float = 0.05
    answers: list[Answer] = field(default_factory=list)
    bids: list[str] = field(default_factory=list)  # acknowledged (201)
    tasks: list[str] = field(default_factory=list)  # acknowledged (201)
    _stop: threading.Event = field(default_factory=threading.Event)
    _lock: threading.Lock = field(default_factory=threading.Lock)
    _threads: list[threading.Thread] = field(default_factory=list)

    def _call(self, client: httpx.Client, op: str, method: str, path: str, **kwargs) -> httpx.Response | None:
        started = time.monotonic()
        try:
            response = client.request(method, path, **kwargs)
        except httpx.HTTPError as exc:
            answer = Answer(started, op, 0, time.monotonic() - started, False, f"{type(exc).__name__}: {exc}")
            response = None
        else:
            answer = Answer(
                started, op, response.status_code, time.monotonic() - started, "X-RateLimit-Limit" in response.headers
            )
            if response.status_code >= 500:
                answer.error = response.text[:300]
        with self._lock:
            self.answers.append(answer)
        return response

    def _writer(self, n: int) -> None:
        with self.stack.client(self.market.poster) as poster, self.stack.client(self.market.bidder) as bidder:
            i = 0
            while not self._stop.is_set():
                i += 1
                response = self._call(poster, "create task", "POST", "/api/v1/tasks", json=task_body(n * 10000 + i))
                if response is not None and response.status_code == 201:
                    task_id = response.json()["id"]
                    with self._lock:
                        self.tasks.append(task_id)
                    response = self._call(
                        bidder,
                        "create bid",
                        "POST",
                        f"/api/v1/tasks/{task_id}/bids",
                        json=bid_body(self.market.agent_id),
                    )
                    if response is not None and response.status_code == 201:
                        with self._lock:
                            self.bids.append(response.json()["id"])
                self._stop.wait(self.pause)

    def _reader(self, n: int) -> None:
        with self.stack.client(self.market.poster) as poster, self.stack.client(self.market.bidder) as bidder:
            while not self._stop.is_set():
                self._call(poster, "list tasks", "GET", "/api/v1/tasks", params={"limit": 10})
                with self._lock:
                    task_id = self.tasks[-1] if self.tasks else None
                if task_id:
                    self._call(poster, "list bids", "GET", f"/api/v1/tasks/{task_id}/bids")
                self._call(bidder, "list agents", "GET", "/api/v1/agents")
                self._stop.wait(self.pause)

    def start(self) -> Load:
        for n in range(self.writers):
            self._threads.append(threading.Thread(target=self._writer, args=(n,), daemon=True))
        for n in range(self.readers):
            self._threads.append(threading.Thread(target=self._reader, args=(n,), daemon=True))
        for thread in self._threads:
            thread.start()
        return self

    def stop(self) -> None:
        self._stop.set()
        for thread in self._threads:
            thread.join(timeout=30)

    def between(self, start: float, end: float) -> list[Answer]:
        with self._lock:
            return [a for a in self.answers if start <= a.at < end]


def statuses(answers: list[Answer]) -> dict:
    return dict(sorted(Counter(a.status for a in answers).items()))


def by_op(answers: list[Answer]) -> dict:
    out: dict[str, Counter] = {}
    for a in answers:
        out.setdefault(a.op, Counter())[a.status] += 1
    return {op: dict(sorted(c.items())) for op, c in sorted(out.items())}
