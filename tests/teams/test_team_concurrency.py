"""Two reactivations at once: one wins, the provider is asked once (Stripe adapter, fake server)."""

from __future__ import annotations

import json
import threading
import time
from datetime import timedelta
from http.server import BaseHTTPRequestHandler

import pytest
from django.db import connection
from django.utils import timezone

from teams.models import Team, TeamStatus
from tests.conftest import client_with_token, jwt_for
from tests.support.servers import serve_http


class FakeStripe(BaseHTTPRequestHandler):
    """Answers subscription updates the way Stripe does, and counts them."""

    updates: list[str] = []
    refuse = False

    def do_POST(self):
        length = int(self.headers.get("Content-Length", 0))
        form = self.rfile.read(length).decode()
        FakeStripe.updates.append(f"{self.path} {form}")
        if FakeStripe.refuse:
            body = json.dumps({"error": {"type": "invalid_request_error", "message": "No such subscription"}})
            self.send_response(400)
            self.send_header("Content-Type", "application/json")
            self.end_headers()
            self.wfile.write(body.encode())
            return
        time.sleep(0.2)  # a provider round trip, long enough for the requests to overlap
        body = json.dumps(
            {
                "id": self.path.rsplit("/", 1)[-1],
                "object": "subscription",
                "status": "active",
                "cancel_at_period_end": "cancel_at_period_end=true" in form,
                "current_period_end": int(time.time()) + 86400 * 10,
                "metadata": {},
            }
        ).encode()
        self.send_response(200)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def log_message(self, *args):
        pass


@pytest.fixture
def fake_stripe(settings):
    FakeStripe.updates, FakeStripe.refuse = [], False
    with serve_http(FakeStripe) as server:
        settings.PAYMENTS_PROVIDER = "stripe"
        settings.STRIPE_API_KEY = "sk_test_fake"
        settings.STRIPE_API_BASE = f"http://127.0.0.1:{server.server_address[1]}"
        yield FakeStripe


@pytest.mark.django_db(transaction=True)
def test_concurrent_reactivations_ask_the_provider_once(fake_stripe, alice):
    team = Team.objects.create(
        owner=alice,
        team_type="seo",
        display_name="SEO",
        status=TeamStatus.CANCELLING,
        payments_subscription_id="sub_concurrent",
        subscription_ends_at=timezone.now() + timedelta(days=5),
    )
    token = jwt_for(alice)
    barrier = threading.Barrier(2)
    statuses: list[int] = []

    def reactivate():
        client = client_with_token(token)
        barrier.wait()
        try:
            statuses.append(client.post(f"/api/v1/teams/{team.id}/reactivate").status_code)
        finally:
            connection.close()

    threads = [threading.Thread(target=reactivate) for _ in range(2)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()

    assert sorted(statuses) in ([200, 200], [200, 409])
    assert statuses.count(200) >= 1
    assert len(fake_stripe.updates) == 1
    assert fake_stripe.updates[0].startswith("/v1/subscriptions/sub_concurrent cancel_at_period_end=false")
    team.refresh_from_db()
    assert team.status == TeamStatus.ACTIVE


@pytest.mark.django_db
def test_a_provider_refusal_changes_nothing_and_is_502(fake_stripe, alice):
    fake_stripe.refuse = True
    ends_at = timezone.now() + timedelta(days=5)
    team = Team.objects.create(
        owner=alice,
        team_type="seo",
        display_name="SEO",
        status=TeamStatus.CANCELLING,
        payments_subscription_id="sub_x",
        subscription_ends_at=ends_at,
    )

    response = client_with_token(jwt_for(alice)).post(f"/api/v1/teams/{team.id}/reactivate")

    assert response.status_code == 502
    assert response.json()["code"] == "provider_error"
    assert len(fake_stripe.updates) == 1
    team.refresh_from_db()
    assert (team.status, team.subscription_ends_at) == (TeamStatus.CANCELLING, ends_at)
