"""A total deadline on every call to a provider API, not only on user-given URLs.

Row 3 (a server dripping one byte every few seconds held a request for a minute) was closed for the
URLs users give us by core.http.outbound.request. The provider adapters (Stripe, the OpenAI-compatible
API, Bright Data, the local payments webhook sender) used httpx's own timeouts, which are per
operation: a provider, or anything in its path, that answers one byte per read timeout holds the
web thread or worker for as long as it likes. They now send through core.http.outbound.DeadlineTransport.
Each test here points a real adapter at a real server on 127.0.0.1 that sends its status line and
headers at once and then drips the body, one byte every 0.2 s (a 60-byte body takes 12 s), and
expects the adapter to give up at its deadline with its usual error.
"""

from __future__ import annotations

import json
import time

import httpx
import pytest

from assistant.providers.openai_http import OpenAIClient
from core.http.errors import ProviderUnavailable
from core.http.outbound import DeadlineTransport
from payments.provider_events import build_event, send_event
from payments.providers.stripe import StripePaymentProvider
from scrapers.providers.brightdata import BrightDataProvider
from tests.security.conftest import serve

DRIP = 0.2
DEADLINE = 1.0
BODY = json.dumps({"id": "x", "status": "ok", "pad": "." * 40}).encode()  # ~60 bytes: 12 s of dripping
REPLY = (200, {"Content-Type": "application/json"}, BODY)


@pytest.fixture
def dripping():
    with serve("127.0.0.1", reply=REPLY, drip=DRIP) as server:
        yield f"http://127.0.0.1:{server.server_address[1]}"


def _timed(call) -> tuple[float, BaseException | None]:
    start = time.monotonic()
    try:
        call()
    except Exception as exc:  # the caller checks which
        return time.monotonic() - start, exc
    return time.monotonic() - start, None


def test_the_transport_cuts_a_dripping_answer_off_at_the_deadline(dripping):
    with httpx.Client(transport=DeadlineTransport(DEADLINE), timeout=5.0) as client:
        elapsed, error = _timed(lambda: client.get(dripping))

    assert isinstance(error, httpx.TimeoutException)
    assert elapsed < DEADLINE + 1.0  # per-read timeouts alone (5 s, each read answered in 0.2 s) would take 12 s


def test_each_request_gets_its_own_deadline_and_quick_answers_pass():
    """The deadline is per request, not per transport: three requests of ~0.45 s each
    through one client with a 1 s deadline all succeed."""
    body = b'{"ok":true}'
    with serve("127.0.0.1", reply=(200, {"Content-Type": "application/json"}, body), drip=0.04) as server:
        url = f"http://127.0.0.1:{server.server_address[1]}"
        with httpx.Client(transport=DeadlineTransport(DEADLINE), timeout=5.0) as client:
            answers = [client.get(url) for _ in range(3)]

    assert [a.json() for a in answers] == [{"ok": True}] * 3


def test_stripe_gives_up_at_its_deadline(dripping):
    stripe = StripePaymentProvider(api_key="sk_test_x", base_url=dripping, deadline=DEADLINE)

    elapsed, error = _timed(lambda: stripe.get_payment("pi_123"))

    assert isinstance(error, ProviderUnavailable), error
    assert "in time" in str(error)
    assert elapsed < DEADLINE + 1.0


def test_the_openai_compatible_client_bounds_each_attempt(dripping):
    client = OpenAIClient(api_key="sk-x", base_url=dripping, timeout=DEADLINE, max_retries=1, sleep=lambda _: None)

    elapsed, error = _timed(lambda: client.post_json("/v1/images/generations", {"prompt": "a cat"}))

    assert isinstance(error, ProviderUnavailable), error
    assert elapsed < 2 * DEADLINE + 1.5  # two attempts of at most a deadline each


def test_bright_data_gives_up_at_its_deadline(dripping):
    provider = BrightDataProvider(token="t", base_url=dripping, deadline=DEADLINE)

    elapsed, error = _timed(lambda: provider.progress("s_1"))

    assert isinstance(error, ProviderUnavailable), error
    assert elapsed < DEADLINE + 1.0


def test_the_local_webhook_sender_gives_up_at_its_deadline(dripping, settings):
    settings.PAYMENTS_WEBHOOK_SECRET = ["whsec_deadline_test"]
    event = build_event("payment_intent.succeeded", {"id": "pi_1", "object": "payment_intent"})

    elapsed, error = _timed(lambda: send_event(event, url=f"{dripping}/api/v1/webhooks/payments", deadline=DEADLINE))

    assert isinstance(error, ProviderUnavailable), error
    assert elapsed < DEADLINE + 1.0
