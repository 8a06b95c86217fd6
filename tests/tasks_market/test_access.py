"""Every object endpoint: another user gets 404, an anonymous caller 401; a JWT and an API key both work."""

from __future__ import annotations

from dataclasses import dataclass

import pytest

from payments.models import LocalPayment, Payment
from tests.support.factories import UserFactory
from tests.tasks_market.factories import AgentFactory, BidFactory, TaskFactory, delivering_task, text_artefact

pytestmark = pytest.mark.django_db


@dataclass
class World:
    agent: str  # alice's agent
    task: str  # alice's task, in review (carol's agent won it)
    bid: str  # the winning bid
    bob_agent: str


@pytest.fixture
def world(alice, bob) -> World:
    carol_agent = AgentFactory(owner=UserFactory())
    task, delivery = delivering_task(poster=alice, agent=carol_agent, delivery_status="submitted")
    return World(
        agent=str(AgentFactory(owner=alice).id),
        task=str(task.id),
        bid=str(delivery.bid_id),
        bob_agent=str(AgentFactory(owner=bob).id),
    )


def object_routes(w: World) -> list[tuple[str, str, dict | None]]:
    bid_body = {"agent_id": w.bob_agent, "amount": 10, "currency": "usd", "proposal": "p", "eta_hours": 1}
    t = f"/api/v1/tasks/{w.task}"
    return [
        ("get", f"/api/v1/agents/{w.agent}", None),
        ("patch", f"/api/v1/agents/{w.agent}/endpoint", {"endpoint_url": "https://agents.example.com/new"}),
        ("post", f"/api/v1/agents/{w.agent}/rotate-secret", None),
        ("post", f"/api/v1/agents/{w.agent}/benchmark", None),
        ("get", f"/api/v1/agents/{w.agent}/benchmarks", None),
        ("get", t, None),
        ("post", f"{t}/cancel", None),
        ("post", f"{t}/remix", {}),
        ("get", f"{t}/bids", None),
        ("post", f"{t}/bids", bid_body),
        ("post", f"{t}/bids/{w.bid}/select", None),
        ("post", f"{t}/bids/{w.bid}/withdraw", None),
        ("get", f"{t}/bids/{w.bid}/artefacts", None),
        ("get", f"{t}/bids/{w.bid}/judge", None),
        ("get", f"{t}/delivery", None),
        ("post", f"{t}/delivery", {"artefacts": [text_artefact()]}),
        ("post", f"{t}/delivery/retry", None),
        ("post", f"{t}/delivery/approve", None),
        ("post", f"{t}/delivery/dispute", {"reason": "r"}),
        ("post", f"{t}/delivery/request-revision", {"feedback": "f"}),
    ]


def test_every_object_endpoint_is_404_for_another_user_and_401_anonymous(world, bob_api, api):
    for method, path, body in object_routes(world):
        response = getattr(bob_api, method)(path, body, format="json")
        assert response.status_code == 404, (method, path, response.content)
        assert response.json() == {"detail": "Not found.", "code": "not_found"}
        assert getattr(api, method)(path, body, format="json").status_code == 401, (method, path)


# Each operation done by its rightful caller, once with a JWT and once with an API key.
def _setup(alice) -> dict:
    carol = UserFactory()
    own_open = TaskFactory(poster=alice)
    carols_open = TaskFactory(poster=carol)
    agent = AgentFactory(owner=alice)
    incoming = BidFactory(task=own_open, agent=AgentFactory(owner=carol))
    outgoing = BidFactory(task=carols_open, agent=agent)
    review_task, _ = delivering_task(poster=alice, delivery_status="submitted")
    payment = Payment.objects.get(source=f"task:{review_task.pk}")
    LocalPayment.objects.create(
        id=payment.provider_payment_id, amount_minor=15000, currency="usd", client_secret="s", status="succeeded"
    )
    failed_task, _ = delivering_task(poster=alice, delivery_status="failed")
    won_task, _ = delivering_task(poster=carol, agent=agent)
    return {
        "agent": agent.id,
        "own_open": own_open.id,
        "carols_open": carols_open.id,
        "incoming": incoming.id,
        "outgoing": outgoing.id,
        "review": review_task.id,
        "failed": failed_task.id,
        "won": won_task.id,
        "new_agent": AgentFactory(owner=alice).id,
    }


OPERATIONS = [
    ("get", "/api/v1/agents", None, 200),
    ("post", "/api/v1/agents", {"name": "n", "endpoint_url": "https://a.example.com/h"}, 201),
    ("get", "/api/v1/agents/{agent}", None, 200),
    ("patch", "/api/v1/agents/{agent}/endpoint", {"endpoint_url": "https://a.example.com/x"}, 200),
    ("post", "/api/v1/agents/{agent}/rotate-secret", None, 200),
    ("post", "/api/v1/agents/{agent}/benchmark", None, 202),
    ("get", "/api/v1/agents/{agent}/benchmarks", None, 200),
    ("get", "/api/v1/tasks", None, 200),
    (
        "post",
        "/api/v1/tasks",
        {
            "title": "t",
            "description": "d",
            "budget_amount": 5,
            "budget_currency": "usd",
            "deadline": "2999-01-01T00:00:00Z",
        },
        201,
    ),
    ("get", "/api/v1/tasks/{own_open}", None, 200),
    ("post", "/api/v1/tasks/{own_open}/cancel", None, 200),
    ("post", "/api/v1/tasks/{carols_open}/remix", {}, 201),
    ("get", "/api/v1/tasks/{own_open}/bids", None, 200),
    (
        "post",
        "/api/v1/tasks/{carols_open}/bids",
        {"agent_id": "{new_agent}", "amount": 1, "currency": "usd", "proposal": "p", "eta_hours": 1},
        201,
    ),
    ("post", "/api/v1/tasks/{own_open}/bids/{incoming}/select", None, 200),
    ("post", "/api/v1/tasks/{carols_open}/bids/{outgoing}/withdraw", None, 200),
    ("get", "/api/v1/tasks/{own_open}/bids/{incoming}/artefacts", None, 200),
    ("get", "/api/v1/tasks/{own_open}/bids/{incoming}/judge", None, 200),
    ("get", "/api/v1/tasks/{review}/delivery", None, 200),
    ("post", "/api/v1/tasks/{won}/delivery", {"artefacts": [text_artefact()]}, 200),
    ("post", "/api/v1/tasks/{failed}/delivery/retry", None, 202),
    ("post", "/api/v1/tasks/{review}/delivery/approve", None, 200),
    ("post", "/api/v1/tasks/{review}/delivery/dispute", {"reason": "r"}, 200),
    ("post", "/api/v1/tasks/{review}/delivery/request-revision", {"feedback": "f"}, 200),
]


@pytest.mark.parametrize("credential", ["jwt", "api_key"])
@pytest.mark.parametrize(
    ("method", "template", "body", "expected"), OPERATIONS, ids=[f"{o[0]} {o[1]}" for o in OPERATIONS]
)
def test_jwt_and_api_key_both_work(request, alice, credential, method, template, body, expected):
    client = request.getfixturevalue("alice_api" if credential == "jwt" else "alice_key_api")
    ids = {k: str(v) for k, v in _setup(alice).items()}
    path = template.format(**ids)
    if body is not None:
        body = {k: (v.format(**ids) if isinstance(v, str) and v.startswith("{") else v) for k, v in body.items()}

    response = getattr(client, method)(path, body, format="json")

    assert response.status_code == expected, response.content
