"""A Celery worker killed in the middle of a delivery dispatch loses nothing, and nothing is applied twice.

The dispatch claims the delivery before it calls the agent. The worker is killed (SIGKILL, no chance to
clean up) while the agent holds the request open; its unacknowledged message comes back from Redis
(acks_late, visibility timeout) to a new worker, which finds the claim taken and does nothing; the beat's
sweep then gives back the dead worker's claim (marking the interrupted attempt) and the dispatch is made
once more, and recorded as dispatched once.
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import threading
import time
from datetime import timedelta
from http.server import BaseHTTPRequestHandler

import pytest
from django.db.models import F

from config.celery_app import app
from signed_delivery.attempts import AttemptStatus
from signed_delivery.engine import CLAIM_TIMEOUT
from tasks_market.models import Delivery, DeliveryAttempt, DeliveryStatus
from tests.ops.conftest import ROOT, Output, process_env, stop
from tests.support.servers import serve_http
from tests.tasks_market.factories import AgentFactory, delivering_task
from webhooks_app.models import WebhookEvent
from webhooks_app.services import webhook_subscription_create


class SlowAgent(BaseHTTPRequestHandler):
    """The agent (/dispatch) holds the first dispatch open until released, and answers every later one at once;
    /hooks is the poster's webhook endpoint."""

    def do_POST(self):
        agent = self.server.agent
        body = self.rfile.read(int(self.headers.get("Content-Length") or 0))
        received = {"headers": {k.lower(): v for k, v in self.headers.items()}, "body": body}
        with agent["lock"]:
            if self.path == "/hooks":
                agent["hooks"].append(received)
                first = False
            else:
                agent["requests"].append(received)
                first = len(agent["requests"]) == 1
        if first:
            agent["release"].wait(timeout=120)
        self.send_response(200)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", "2")
        self.end_headers()
        self.wfile.write(b"{}")

    def log_message(self, *args):
        pass


def start_worker(output: Output) -> subprocess.Popen:
    return subprocess.Popen(
        [
            *(sys.executable, "-m", "celery", "-A", "config", "worker", "--pool=solo", "--loglevel=INFO"),
            *("--without-gossip", "--without-mingle", "--without-heartbeat"),
        ],
        cwd=ROOT,
        env=process_env("tests.ops.worker_settings"),
        stdout=output.file,
        stderr=subprocess.STDOUT,
    )


def wait_until(condition, what: str, timeout: float = 90, *, alive: subprocess.Popen | None = None, log=None):
    deadline = time.monotonic() + timeout
    while not condition():
        if alive is not None:
            assert alive.poll() is None, f"the worker died while waiting for {what}:\n{log.text()[-5000:]}"
        assert time.monotonic() < deadline, f"timed out waiting for {what}" + (
            f":\n{log.text()[-5000:]}" if log else ""
        )
        time.sleep(0.2)


@pytest.mark.filterwarnings("ignore::celery.exceptions.AlwaysEagerIgnored")  # send_task is meant to bypass eager mode
@pytest.mark.timeout(300)
@pytest.mark.django_db(transaction=True)
def test_a_worker_killed_mid_dispatch_loses_nothing_and_applies_once(tmp_path):
    with serve_http(SlowAgent) as server:
        server.agent = agent_state = {
            "requests": [],
            "hooks": [],
            "lock": threading.Lock(),
            "release": threading.Event(),
        }
        base = f"http://127.0.0.1:{server.server_address[1]}"
        agent = AgentFactory(endpoint_url=f"{base}/dispatch")
        task, delivery = delivering_task(agent=agent, delivery_status=DeliveryStatus.PENDING)
        webhook_subscription_create(owner=task.poster, url=f"{base}/hooks", events=["delivery.dispatched"])

        first_log = Output(tmp_path / "worker-1.log")
        first = start_worker(first_log)
        try:
            message = app.send_task("tasks_market.tasks.dispatch_delivery", args=[str(delivery.id), None])
            wait_until(lambda: agent_state["requests"], "the dispatch to reach the agent", alive=first, log=first_log)
            os.kill(first.pid, signal.SIGKILL)  # mid-request: the attempt is open, the message unacknowledged
            first.wait(timeout=30)
        finally:
            stop(first)
        agent_state["release"].set()

        delivery.refresh_from_db()
        assert delivery.status == DeliveryStatus.PENDING
        assert delivery.claimed_at is not None and delivery.attempt_count == 1
        assert list(DeliveryAttempt.objects.filter(delivery=delivery).values_list("status", flat=True)) == [
            AttemptStatus.PENDING
        ]

        second_log = Output(tmp_path / "worker-2.log")
        second = start_worker(second_log)
        try:
            # Redis hands the dead worker's message to the new one; the claim makes it a no-op.
            wait_until(
                lambda: f"[{message.id}] succeeded" in second_log.text(),
                "the redelivered message",
                alive=second,
                log=second_log,
            )
            assert f"[{message.id}] received" in second_log.text()
            delivery.refresh_from_db()
            assert (delivery.status, delivery.attempt_count, len(agent_state["requests"])) == ("pending", 1, 1)

            # Five minutes on, the beat's sweep finds the dead worker's claim: backdate it rather than wait.
            Delivery.objects.filter(pk=delivery.pk).update(
                claimed_at=F("claimed_at") - CLAIM_TIMEOUT - timedelta(minutes=1)
            )
            app.send_task("tasks_market.tasks.sweep_deliveries")
            wait_until(
                lambda: Delivery.objects.filter(pk=delivery.pk, status=DeliveryStatus.DISPATCHED).exists(),
                "the dispatch to be made again",
                alive=second,
                log=second_log,
            )
            wait_until(lambda: agent_state["hooks"], "the poster's webhook", alive=second, log=second_log)
        finally:
            stop(second)

    delivery.refresh_from_db()
    assert delivery.status == DeliveryStatus.DISPATCHED
    assert delivery.attempt_count == 2 and delivery.claimed_at is None
    attempts = list(DeliveryAttempt.objects.filter(delivery=delivery).order_by("number"))
    assert [(a.number, a.status) for a in attempts] == [(1, AttemptStatus.FAILED), (2, AttemptStatus.SUCCEEDED)]
    assert attempts[0].error.startswith("Interrupted")
    assert attempts[1].status_code == 200
    # The agent saw the same message twice (same webhook-id: it can tell); our side applied it once.
    assert len(agent_state["requests"]) == 2
    assert {r["headers"]["webhook-id"] for r in agent_state["requests"]} == {delivery.message_id}
    # Its consequence happened once: one `delivery.dispatched` event, delivered once to the poster.
    assert WebhookEvent.objects.filter(type="delivery.dispatched").count() == 1
    assert [json.loads(hook["body"])["type"] for hook in agent_state["hooks"]] == ["delivery.dispatched"]
