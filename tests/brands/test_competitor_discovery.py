"""Competitor discovery from data (docs/decisions.md#competitor-discovery): the DataForSEO adapter against a local
stand-in of its API (httpx.MockTransport, shaped like DataForSEO Labs' competitors_domain/live answers), the local
provider against a real page on 127.0.0.1, deduplication, where a row came from, and the run's idempotence and
`competitors.changed` event."""

from __future__ import annotations

import base64
import json

import httpx
import pytest

from brands.audits import audit_competitors
from brands.domain.matching import registrable_domain, same_company
from brands.models import BrandCompetitor, CompetitorSeed
from brands.providers.seo import COMPETITORS_PATH, DataForSEOProvider, LocalSEOProvider
from brands.selectors.competitors import competitor_roster
from brands.services.discovery import competitors_discovery_run
from brands.tasks import discover_competitors
from core.http.errors import ProviderError, ProviderUnavailable
from tests.brands.factories import BrandFactory, CompetitorSeedFactory
from tests.brands.http_server import running_server
from tests.webhooks_app.factories import WebhookSubscriptionFactory
from webhooks_app.models import WebhookEvent

pytestmark = pytest.mark.django_db


# --- Same company, same host ------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("a", "b", "same"),
    [
        ("PepsiCo", "Pepsi Co", True),
        ("PepsiCo", "Pepsi Co.", True),
        ("Ford", "Ford Motor Company", True),
        ("Meta", "Meta Platforms", True),
        ("Meta Platforms, Inc.", "meta", True),
        ("Apple", "Apple Inc.", True),
        ("Meta", "Metro", False),
        ("Ford", "Fordham", False),
        ("General Motors", "General Mills", False),
        ("Pepsi", "Coca-Cola", False),
    ],
)
def test_same_company(a, b, same):
    assert same_company(a, b) is same
    assert same_company(b, a) is same


@pytest.mark.parametrize(
    ("value", "registrable"),
    [
        ("https://shop.pepsico.co.uk/x", "pepsico.co.uk"),
        ("WWW.Ford.com", "ford.com"),
        ("news.bbc.co.uk", "bbc.co.uk"),
        ("127.0.0.1", ""),
        ("localhost", ""),
        ("co.uk", ""),
        ("not a host", ""),
    ],
)
def test_registrable_domain_needs_no_network(value, registrable):
    assert registrable_domain(value) == registrable


# --- DataForSEO against a stand-in of its API ----------------------------------------------------------


def answer(items, *, status_code=20000, task_status=20000):
    """A competitors_domain/live answer as DataForSEO Labs documents it."""
    return {
        "version": "0.1.20240801",
        "status_code": status_code,
        "status_message": "Ok." if status_code == 20000 else "Error.",
        "tasks_count": 1,
        "tasks_error": 0 if task_status == 20000 else 1,
        "tasks": [
            {
                "id": "11261846-1535-0216-0000-5d1f1a3b7d2e",
                "status_code": task_status,
                "status_message": "Ok." if task_status == 20000 else "Error.",
                "data": {"api": "dataforseo_labs", "function": "competitors_domain", "se_type": "google"},
                "result": [
                    {
                        "se_type": "google",
                        "target": "acme.com",
                        "location_code": 2840,
                        "language_code": "en",
                        "total_count": len(items),
                        "items_count": len(items),
                        "items": [
                            {
                                "se_type": "google",
                                "domain": domain,
                                "avg_position": 12.5,
                                "sum_position": 250,
                                "intersections": 20,
                                "full_domain_metrics": {"organic": {"pos_1": 3, "etv": 1200.5, "count": 40}},
                            }
                            for domain in items
                        ],
                    }
                ]
                if task_status == 20000
                else None,
            }
        ],
    }


class StandIn:
    """Plays DataForSEO: each call takes the next scripted reply (a Response, or an exception to raise)."""

    def __init__(self, *replies):
        self.replies = list(replies)
        self.requests: list[httpx.Request] = []
        self.slept: list[float] = []

    def handler(self, request: httpx.Request) -> httpx.Response:
        self.requests.append(request)
        reply = self.replies.pop(0) if len(self.replies) > 1 else self.replies[0]
        if isinstance(reply, Exception):
            raise reply
        return reply

    def provider(self, settings) -> DataForSEOProvider:
        settings.DATAFORSEO_MAX_ATTEMPTS = 3
        settings.DATAFORSEO_MAX_BACKOFF_SECONDS = 30
        return DataForSEOProvider(
            login="login@example.com",
            password="secret",
            base_url="https://api.dataforseo.test",
            client=httpx.Client(transport=httpx.MockTransport(self.handler)),
            sleep=self.slept.append,
        )


def ok(*domains):
    return httpx.Response(200, json=answer(list(domains)))


def test_dataforseo_asks_for_the_competitors_of_the_target_with_basic_auth(settings):
    stand_in = StandIn(ok("www.rival.com", "shop.other.co.uk", "not-a-host"))

    found = stand_in.provider(settings).competitors(target_domain="www.acme.com")

    [request] = stand_in.requests
    assert request.method == "POST"
    assert request.url.path == COMPETITORS_PATH
    assert request.headers["authorization"] == "Basic " + base64.b64encode(b"login@example.com:secret").decode()
    [task] = json.loads(request.content)
    assert task["target"] == "acme.com"
    assert task["location_code"] == 2840 and task["language_code"] == "en"
    assert (found.provider, found.origin) == ("dataforseo", "dataforseo")
    assert [(c.domain, c.name) for c in found.candidates] == [("rival.com", "Rival"), ("other.co.uk", "Other")]
    assert found.candidates[0].metrics["intersections"] == 20


@pytest.mark.parametrize(
    ("replies", "error", "calls", "slept"),
    [
        # Bad or expired credentials: refused at once, never retried.
        ([httpx.Response(401, json=answer([], status_code=40100))], ProviderError, 1, []),
        ([httpx.Response(200, json=answer([], status_code=40100))], ProviderError, 1, []),
        ([httpx.Response(200, json=answer([], task_status=40102))], ProviderError, 1, []),
        ([httpx.Response(402, json={})], ProviderError, 1, []),
        # Rate limited: Retry-After is waited out, then the answer comes.
        ([httpx.Response(429, headers={"Retry-After": "2"}), ok("rival.com")], None, 2, [2.0]),
        ([httpx.Response(200, json=answer([], task_status=40202)), ok("rival.com")], None, 2, [1.0]),
        # ... but not past DATAFORSEO_MAX_BACKOFF_SECONDS: a retryable failure instead.
        ([httpx.Response(429, headers={"Retry-After": "120"})], ProviderUnavailable, 1, []),
        # Still limited after every attempt: retryable.
        ([httpx.Response(200, json=answer([], task_status=40202))], ProviderUnavailable, 3, [1.0, 2.0]),
        # The answer lost in transit, then read again.
        ([httpx.ReadTimeout("lost"), ok("rival.com")], None, 2, [1.0]),
        ([httpx.ConnectError("refused")], ProviderUnavailable, 3, [1.0, 2.0]),
        ([httpx.Response(503, text="busy"), ok("rival.com")], None, 2, [1.0]),
    ],
)
def test_dataforseo_failures(settings, replies, error, calls, slept):
    stand_in = StandIn(*replies)
    provider = stand_in.provider(settings)

    if error is None:
        assert [c.domain for c in provider.competitors(target_domain="acme.com").candidates] == ["rival.com"]
    else:
        with pytest.raises(error):
            provider.competitors(target_domain="acme.com")
    assert len(stand_in.requests) == calls
    assert stand_in.slept == slept


def test_dataforseo_is_unavailable_until_configured(settings):
    settings.DATAFORSEO_LOGIN = ""

    with pytest.raises(ProviderUnavailable):
        DataForSEOProvider()


# --- The run -----------------------------------------------------------------------------------------------


@pytest.fixture
def brand(alice):
    return BrandFactory(owner=alice, name="Acme", domain="acme.com", website_url="https://acme.com/")


@pytest.fixture
def hook(alice):
    return WebhookSubscriptionFactory(owner=alice, events=["competitors.changed"])


def events():
    return [json.loads(e.body)["data"] for e in WebhookEvent.objects.filter(type="competitors.changed")]


def test_a_run_stores_the_answer_once_and_a_repeat_changes_nothing(settings, brand, hook):
    BrandCompetitor.objects.create(brand=brand, name="Ford Motor Company", added=True, canonical_domain="fordmc.com")
    CompetitorSeedFactory(target_domain="acme.com", name="Meta Platforms", canonical_domain="meta-platforms.net")
    # The answer names one company twice (host and name) and three that the roster already has.
    domains = ("rival.com", "www.rival.com", "pepsico.com", "pepsi-co.com", "ford.com", "meta.com", "acme.com")
    stand_in = StandIn(ok(*domains))

    first = competitors_discovery_run(brand_id=brand.id, provider=stand_in.provider(settings))
    second = competitors_discovery_run(brand_id=brand.id, provider=stand_in.provider(settings))

    assert first["added"] == ["rival.com", "pepsico.com"]
    assert set(first["skipped_duplicates"]) == {"rival.com", "pepsi-co.com", "ford.com", "meta.com", "acme.com"}
    assert (second["added"], second["removed"]) == ([], [])
    assert events() == [{"brand_id": str(brand.id), "provider": "dataforseo", "added": 2, "removed": 0}]
    rows = {r["name"]: (r["source"], r["origin"]) for r in competitor_roster(brand)}
    assert rows == {
        "Rival": ("seo_discovery", "dataforseo"),
        "Pepsico": ("seo_discovery", "dataforseo"),
        "Ford Motor Company": ("seo_discovery", "manual"),  # hand-typed: not presented as discovered
        "Meta Platforms": ("seo_discovery", "admin"),
    }


def test_a_retry_after_a_lost_answer_does_not_duplicate_rows(settings, brand, hook):
    stand_in = StandIn(httpx.ReadTimeout("lost"), ok("rival.com", "globex.com"))
    competitors_discovery_run(brand_id=brand.id, provider=stand_in.provider(settings))
    # The worker died before it acknowledged: the task runs again with the same answer.
    competitors_discovery_run(brand_id=brand.id, provider=StandIn(ok("rival.com", "globex.com")).provider(settings))

    assert sorted(CompetitorSeed.objects.values_list("canonical_domain", flat=True)) == ["globex.com", "rival.com"]
    assert len(events()) == 1


def test_a_domain_the_provider_drops_goes_unless_a_person_kept_it(settings, brand, hook):
    competitors_discovery_run(brand_id=brand.id, provider=StandIn(ok("a-rival.com", "b-rival.com")).provider(settings))
    starred = CompetitorSeed.objects.get(canonical_domain="b-rival.com")
    BrandCompetitor.objects.create(brand=brand, seed=starred, name=starred.name, is_starred=True)

    result = competitors_discovery_run(brand_id=brand.id, provider=StandIn(ok()).provider(settings))

    assert result["removed"] == ["a-rival.com"]
    assert list(CompetitorSeed.objects.values_list("canonical_domain", flat=True)) == ["b-rival.com"]
    assert {"brand_id": str(brand.id), "provider": "dataforseo", "added": 0, "removed": 1} in events()


def test_a_refused_provider_writes_nothing(settings, brand, hook):
    with pytest.raises(ProviderError):
        competitors_discovery_run(brand_id=brand.id, provider=StandIn(httpx.Response(401, json={})).provider(settings))
    assert not CompetitorSeed.objects.exists()
    assert events() == []


# --- The local provider and the audit ----------------------------------------------------------------------

PAGE = """<html><body>
<a href="/about">About</a> <a href="https://acme.com/blog">Blog</a>
<a href="https://www.rival.com/shoes">Rival</a> <a href="https://rival.com/">Rival again</a>
<a href="https://shop.other.co.uk/">Other</a> <a href="https://facebook.com/acme">Facebook</a>
<a href="mailto:hi@acme.com">Mail</a>
</body></html>"""


def test_the_local_provider_reads_the_links_of_the_website_and_says_it_is_local():
    with running_server() as server:
        url = server.route("/", PAGE)
        found = LocalSEOProvider().competitors(target_domain="acme.com", website_url=url)

    assert (found.provider, found.origin, found.source_url) == ("local", "local_crawl", url)
    assert [(c.domain, c.metrics) for c in found.candidates] == [
        ("rival.com", {"links": 2}),
        ("other.co.uk", {"links": 1}),
    ]


def test_the_competitors_audit_discovers_first_and_counts_only_discovered_rows(brand, settings):
    BrandCompetitor.objects.create(brand=brand, name="Typed By Hand", added=True)
    CompetitorSeedFactory(target_domain="acme.com", name="Demo Rival", discovered_by="demo")
    with running_server() as server:
        brand.website_url = server.route("/", PAGE)
        brand.save(update_fields=["website_url"])
        outcome = audit_competitors(brand)

    assert outcome.data["discovery"]["provider"] == "local"
    assert outcome.data["discovery"]["added"] == ["rival.com", "other.co.uk"]
    assert (outcome.data["discovered"], outcome.data["manual"], outcome.data["seeded"]) == (2, 1, 1)
    by_name = {c["name"]: c["origin"] for c in outcome.data["competitors"]}
    assert by_name == {"Rival": "local_crawl", "Other": "local_crawl", "Typed By Hand": "manual", "Demo Rival": "demo"}


def test_the_competitors_audit_survives_a_provider_that_fails(brand):
    brand.website_url = ""
    brand.save(update_fields=["website_url"])

    outcome = audit_competitors(brand)

    assert outcome.data["discovery"]["status"] == "failed"
    assert outcome.data["discovered"] == 0


def test_the_task_runs_discovery_and_reports_a_refusal(brand, hook):
    with running_server() as server:
        brand.website_url = server.route("/", PAGE)
        brand.save(update_fields=["website_url"])
        done = discover_competitors.apply(args=[str(brand.id)]).get()
        again = discover_competitors.apply(args=[str(brand.id)]).get()
    brand.website_url = ""
    brand.save(update_fields=["website_url"])
    refused = discover_competitors.apply(args=[str(brand.id)]).get()

    assert (done["provider"], done["added"], again["added"]) == ("local", ["rival.com", "other.co.uk"], [])
    assert events() == [{"brand_id": str(brand.id), "provider": "local", "added": 2, "removed": 0}]
    assert refused["status"] == "failed"
