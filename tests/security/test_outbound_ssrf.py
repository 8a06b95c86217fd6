"""Outbound calls to user-given URLs (core/http/outbound.py).

1. DNS rebinding: the call goes to the address that was checked, not to a second DNS answer.
2. IPv6 forms that carry an IPv4 address are checked on that address.
3. A total deadline per call: a server dripping bytes is cut off at the deadline.
And: a redirect to a private address is refused; the error stored on a webhook attempt says what
failed without echoing what an internal server sent.
"""

from __future__ import annotations

import time

import pytest
from django.db import transaction

from core.http.outbound import OutboundError, UnsafeURL, address_allowed, fetch
from tests.security.conftest import PUBLIC, html, serve, twin_servers
from tests.tasks_market.conftest import register_agent
from tests.webhooks_app.factories import WebhookSubscriptionFactory
from webhooks_app.models import WebhookDelivery
from webhooks_app.services import event_publish

pytestmark = pytest.mark.django_db

SCRAPE = "/api/v1/signature/scrape-website"


# --- 1. DNS rebinding ----------------------------------------------------------------------------


def test_scrape_website_reads_the_checked_address_not_a_rebound_one(api, settings, dns, internet):
    """The name answers a public address, then 127.0.0.1. The page must come from the public one."""
    settings.OUTBOUND_ALLOW_PRIVATE_URLS = False
    with twin_servers("127.0.0.2", "127.0.0.1", html("Public Page"), html("Internal Admin")) as (public, internal):
        port = public.server_address[1]
        internet[PUBLIC] = "127.0.0.2"
        dns.answers["rebind.example"] = [[PUBLIC], ["127.0.0.1"]]

        response = api.post(SCRAPE, {"url": f"http://rebind.example:{port}/"}, format="json")

    assert internal.seen == []
    assert response.status_code == 200, response.content
    assert response.json()["title"] == "Public Page"
    assert [s.host for s in public.seen] == [f"rebind.example:{port}"]  # the name, not the address, in Host


def test_the_client_dials_what_its_resolver_answered_once(settings, internet):
    """At the client: the injected resolver is asked once per call, and its answer is what is dialled."""
    settings.OUTBOUND_ALLOW_PRIVATE_URLS = False
    answers = [[PUBLIC], ["127.0.0.1"]]
    asked = []

    def resolver(host):
        asked.append(host)
        return answers.pop(0)

    with twin_servers("127.0.0.2", "127.0.0.1", html("Public Page"), html("Internal Admin")) as (public, internal):
        internet[PUBLIC] = "127.0.0.2"
        page = fetch(f"http://rebind.example:{public.server_address[1]}/", resolver=resolver)
        with pytest.raises(UnsafeURL, match="non-public address"):  # the second answer is checked too
            fetch(f"http://rebind.example:{public.server_address[1]}/", resolver=resolver)

    assert "Public Page" in page.text
    assert asked == ["rebind.example", "rebind.example"]
    assert internal.seen == []


@pytest.fixture
def publish(alice, django_capture_on_commit_callbacks):
    """Publish as domain code does; the delivery runs (eagerly) when the transaction commits."""

    def publish():
        with django_capture_on_commit_callbacks(execute=True), transaction.atomic():
            event_publish(owner=alice, event_type="task.created", data={"task_id": "t-1"})

    return publish


def test_a_webhook_attempt_to_a_rebinding_name_stores_no_internal_detail(alice, settings, dns, internet, publish):
    """The delivery goes to the checked (public) address, which refuses; the attempt says just that.
    Before, the call reached 127.0.0.1 and stored the TLS error text an internal port gave."""
    settings.OUTBOUND_ALLOW_PRIVATE_URLS = False
    secret_reply = (500, {"Content-Type": "text/plain"}, b"INTERNAL-SECRET stack trace at 10.0.0.7")
    with serve("127.0.0.1", reply=secret_reply) as internal:
        port = internal.server_address[1]
        internet[PUBLIC] = "127.0.0.3"  # nothing listens there: the public address refuses
        dns.answers["rebind.example"] = [[PUBLIC], ["127.0.0.1"]]
        WebhookSubscriptionFactory(owner=alice, url=f"https://rebind.example:{port}/hook", events=["task.created"])

        publish()

    attempt = WebhookDelivery.objects.get().attempts.get()
    assert internal.seen == []
    assert attempt.error == "The call failed: connection refused."
    assert "INTERNAL-SECRET" not in attempt.error + attempt.response_excerpt


# --- 2. IPv6 transition forms --------------------------------------------------------------------

TRANSITION_FORMS = [
    "https://[::127.0.0.1]/hook",  # IPv4-compatible loopback
    "https://[64:ff9b::a9fe:a9fe]/hook",  # NAT64 of 169.254.169.254, the metadata address
    "https://[2002:a9fe:a9fe::]/hook",  # 6to4 of 169.254.169.254
    "https://[64:ff9b:1::a9fe:a9fe]/hook",  # local-use NAT64 prefix
    "https://[::ffff:169.254.169.254]/hook",  # IPv4-mapped
    "https://[2001:0:4136:e378:8000:63bf:3fff:fdd2]/hook",  # Teredo
]


@pytest.mark.parametrize("url", TRANSITION_FORMS)
def test_webhook_subscriptions_refuse_ipv6_forms_of_private_addresses(alice_api, settings, url):
    settings.OUTBOUND_ALLOW_PRIVATE_URLS = False

    response = alice_api.post("/api/v1/webhooks/subscriptions", {"url": url, "events": ["task.created"]}, format="json")

    assert response.status_code == 422, response.content
    assert response.json()["detail"][0]["loc"] == ["body", "url"]


@pytest.mark.parametrize("url", TRANSITION_FORMS)
def test_agent_endpoints_refuse_ipv6_forms_of_private_addresses(alice_api, settings, url):
    agent = register_agent(alice_api)
    settings.OUTBOUND_ALLOW_PRIVATE_URLS = False

    response = alice_api.patch(f"/api/v1/agents/{agent['id']}/endpoint", {"endpoint_url": url}, format="json")

    assert response.status_code == 422, response.content
    assert response.json()["detail"][0]["loc"] == ["body", "endpoint_url"]


@pytest.mark.parametrize(
    ("address", "allowed"),
    [
        ("93.184.215.14", True),
        ("2606:4700:4700::1111", True),
        ("64:ff9b::5db8:d70e", True),  # NAT64 of a public address
        ("2002:5db8:d70e::1", True),  # 6to4 of a public address
        ("127.0.0.1", False),
        ("100.64.0.1", False),
        ("224.0.0.1", False),
        ("::1", False),
        ("::127.0.0.1", False),
        ("::ffff:10.0.0.1", False),
        ("64:ff9b::a00:1", False),
        ("64:ff9b:1::5db8:d70e", False),
        ("2002:c0a8:101::", False),
        ("2001:0:4136:e378:8000:63bf:3fff:fdd2", False),
        ("fe80::1%eth0", False),
        ("fd00::1", False),
    ],
)
def test_which_addresses_are_allowed(address, allowed):
    assert address_allowed(address) is allowed


# --- A redirect to a private address --------------------------------------------------------------


@pytest.mark.parametrize(
    "location", ["http://127.0.0.1:{port}/admin", "http://[::127.0.0.1]:{port}/admin", "http://[64:ff9b::7f00:1]/"]
)
def test_a_redirect_to_a_private_address_is_refused(api, settings, dns, internet, location):
    settings.OUTBOUND_ALLOW_PRIVATE_URLS = False

    def reply(path):
        if path == "/":
            return 302, {"Location": location.format(port=port)}, b""
        return html("Public Page")

    with twin_servers("127.0.0.2", "127.0.0.1", reply, html("Internal Admin")) as (public, internal):
        port = public.server_address[1]
        internet[PUBLIC] = "127.0.0.2"
        dns.answers["site.example"] = [[PUBLIC]]

        response = api.post(SCRAPE, {"url": f"http://site.example:{port}/"}, format="json")

    assert response.status_code == 422, response.content
    assert "non-public address" in response.json()["detail"][0]["msg"]
    assert internal.seen == []


# --- 3. A total deadline -------------------------------------------------------------------------


@pytest.mark.parametrize("drip_headers", [False, True], ids=["body", "status-line"])
def test_scrape_website_stops_a_dripping_server_at_the_deadline(api, settings, drip_headers):
    settings.OUTBOUND_ALLOW_PRIVATE_URLS = True
    settings.OUTBOUND_PAGE_DEADLINE_SECONDS = 2
    reply = (200, {"Content-Type": "text/html"}, b"<title>Slow</title>")
    with serve("127.0.0.1", reply=reply, drip=1.0, drip_headers=drip_headers) as slow:
        started = time.monotonic()
        response = api.post(SCRAPE, {"url": f"http://127.0.0.1:{slow.server_address[1]}/"}, format="json")
        elapsed = time.monotonic() - started

    assert response.status_code == 422, response.content
    assert response.json()["detail"][0]["msg"] == "Value error, The website did not answer in time."
    assert elapsed < 3.5


def test_a_webhook_to_a_dripping_server_stops_at_the_deadline(alice, settings, publish):
    settings.OUTBOUND_ALLOW_PRIVATE_URLS = True
    settings.OUTBOUND_CALL_DEADLINE_SECONDS = 2
    with serve("127.0.0.1", reply=(200, {}, b"ok" * 8), drip=1.0) as slow:
        WebhookSubscriptionFactory(
            owner=alice, url=f"http://127.0.0.1:{slow.server_address[1]}/hook", events=["task.created"]
        )
        publish()

    attempt = WebhookDelivery.objects.get().attempts.get()
    assert attempt.error == "The call failed: timed out after 2 s."
    assert attempt.duration_ms < 3500


def test_the_response_size_is_capped(settings):
    settings.OUTBOUND_ALLOW_PRIVATE_URLS = True
    with serve("127.0.0.1", reply=(200, {"Content-Type": "text/html"}, b"a" * 100_000)) as big:
        page = fetch(f"http://127.0.0.1:{big.server_address[1]}/", max_bytes=1000)

    assert (len(page.content), page.truncated) == (1000, True)


def test_an_unreachable_address_fails_with_plain_words(settings):
    settings.OUTBOUND_ALLOW_PRIVATE_URLS = True
    with serve("127.0.0.1") as gone:
        port = gone.server_address[1]

    with pytest.raises(OutboundError) as failure:
        fetch(f"http://127.0.0.1:{port}/")

    assert str(failure.value) == "connection refused"
