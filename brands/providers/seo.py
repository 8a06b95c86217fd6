"""SEO providers: which domains compete with a brand's domain (docs/decisions.md#competitor-discovery).

The interface is one read, `competitors(target_domain=..., website_url=...) -> Discovery`: the candidate
domains, each with a display name and the provider's metrics. Reading twice is safe, so a call that failed
on the way may be made again; the discovery run (brands.services.discovery) stores the answer once per
registrable domain, so a repeated answer adds nothing.

- `dataforseo` (SEO_PROVIDER=dataforseo): DataForSEO Labs' `POST /v3/dataforseo_labs/google/competitors_domain/live`
  with HTTP Basic auth. The body is a list of tasks (`target`, `location_code`, `language_code`, `limit`,
  `exclude_top_domains`); the answer's `status_code` (20000 ok) and each task's own `status_code` say how it
  went, and `tasks[0].result[0].items[]` carry `domain`, `avg_position`, `sum_position`, `intersections`,
  `full_domain_metrics`. Errors: HTTP 401/403 or status 40100-40104 → ProviderError (the credentials are
  refused: retrying will not help); HTTP 402 or 40200/40210 → ProviderError (the account cannot pay);
  HTTP 429 or status 40202 (rate limit), 5xx or 50000-50999, timeouts and network failures are retried
  DATAFORSEO_MAX_ATTEMPTS times in all, waiting `Retry-After` (when given, up to DATAFORSEO_MAX_BACKOFF_SECONDS)
  or an exponential back-off, then → ProviderUnavailable (transient: try again later).
- `local` (the default): reads the brand's own website through the outbound-safe fetch
  (core.http.outbound.fetch) and proposes the other registrable domains it links to, less social
  platforms and common services. Its answer says `provider: "local"` and its rows are `local_crawl`; a deploy
  check refuses it in production unless SEO_ALLOW_LOCAL_PROVIDER_IN_PRODUCTION opts in (brands/checks.py).
"""

from __future__ import annotations

import base64
import logging
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from html.parser import HTMLParser
from typing import Any, Protocol
from urllib.parse import urljoin

import httpx
from django.conf import settings

from brands.domain.matching import name_from_domain, normalize_domain, registrable_domain
from core.http.errors import ProviderError, ProviderUnavailable
from core.http.outbound import DeadlineTransport, OutboundError, UnsafeURL, fetch

logger = logging.getLogger(__name__)

COMPETITORS_PATH = "/v3/dataforseo_labs/google/competitors_domain/live"
OK = 20000
AUTH_CODES = frozenset({40100, 40101, 40102, 40103, 40104})
PAYMENT_CODES = frozenset({40200, 40210})
RATE_LIMIT_CODE = 40202
WEBSITE_MAX_BYTES = 2 * 1024 * 1024
# Hosts a brand's website links to that are not competitors: platforms, app stores, common services.
NOT_COMPETITORS = frozenset(
    {
        "facebook.com",
        "instagram.com",
        "twitter.com",
        "x.com",
        "linkedin.com",
        "youtube.com",
        "youtu.be",
        "tiktok.com",
        "pinterest.com",
        "snapchat.com",
        "threads.net",
        "google.com",
        "goo.gl",
        "apple.com",
        "microsoft.com",
        "wikipedia.org",
        "github.com",
        "medium.com",
        "wordpress.com",
        "shopify.com",
        "w3.org",
        "schema.org",
        "gstatic.com",
        "googleapis.com",
        "cloudflare.com",
        "bit.ly",
        "t.co",
        "mailchimp.com",
        "trustpilot.com",
        "paypal.com",
        "stripe.com",
    }
)


@dataclass(frozen=True)
class Candidate:
    domain: str  # registrable domain
    name: str
    metrics: dict[str, Any] = field(default_factory=dict)


@dataclass(frozen=True)
class Discovery:
    provider: str  # "dataforseo" | "local"
    origin: str  # the rows' CompetitorOrigin: "dataforseo" | "local_crawl"
    target: str
    candidates: list[Candidate]
    source_url: str | None = None  # the page the local provider read


class SEOProvider(Protocol):
    name: str

    def competitors(self, *, target_domain: str, website_url: str) -> Discovery: ...


# --- DataForSEO Labs ------------------------------------------------------------------------------------


def _retry_after(response: httpx.Response) -> float | None:
    value = response.headers.get("retry-after", "").strip()
    try:
        return max(0.0, float(value)) if value else None
    except ValueError:
        return None


class _Transient(Exception):
    def __init__(self, message: str, retry_after: float | None = None):
        super().__init__(message)
        self.message, self.retry_after = message, retry_after


class DataForSEOProvider:
    name = "dataforseo"

    def __init__(
        self,
        *,
        login: str | None = None,
        password: str | None = None,
        base_url: str | None = None,
        client: httpx.Client | None = None,
        sleep: Callable[[float], None] = time.sleep,
    ):
        login = login if login is not None else settings.DATAFORSEO_LOGIN
        password = password if password is not None else settings.DATAFORSEO_PASSWORD
        if not login or not password:
            raise ProviderUnavailable("DataForSEO is not configured (DATAFORSEO_LOGIN / DATAFORSEO_PASSWORD).")
        token = base64.b64encode(f"{login}:{password}".encode()).decode()
        self._headers = {"Authorization": f"Basic {token}", "Accept": "application/json"}
        self.base_url = (base_url or settings.DATAFORSEO_BASE_URL).rstrip("/")
        timeout = settings.DATAFORSEO_TIMEOUT_SECONDS
        self._client = client or httpx.Client(
            timeout=httpx.Timeout(timeout, connect=min(5.0, timeout)), transport=DeadlineTransport(timeout)
        )
        self._sleep = sleep
        self.max_attempts = max(1, settings.DATAFORSEO_MAX_ATTEMPTS)

    def competitors(self, *, target_domain: str, website_url: str = "") -> Discovery:
        target = registrable_domain(target_domain) or target_domain
        task = {
            "target": target,
            "location_code": settings.DATAFORSEO_LOCATION_CODE,
            "language_code": settings.DATAFORSEO_LANGUAGE_CODE,
            "limit": settings.SEO_DISCOVERY_LIMIT,
            "exclude_top_domains": True,
        }
        for attempt in range(1, self.max_attempts + 1):
            try:
                items = self._call([task])
                break
            except _Transient as exc:
                wait = exc.retry_after if exc.retry_after is not None else min(2.0 ** (attempt - 1), 30.0)
                if attempt >= self.max_attempts or wait > settings.DATAFORSEO_MAX_BACKOFF_SECONDS:
                    raise ProviderUnavailable(f"DataForSEO: {exc.message} (after {attempt} attempts).") from exc
                logger.info("DataForSEO: %s; attempt %s again in %.1f s", exc.message, attempt + 1, wait)
                self._sleep(wait)
        candidates = []
        for item in items:
            domain = registrable_domain(str(item.get("domain") or "")) if isinstance(item, dict) else ""
            if not domain:
                continue
            metrics = {
                k: item.get(k)
                for k in ("avg_position", "sum_position", "intersections", "full_domain_metrics")
                if item.get(k) is not None
            }
            candidates.append(Candidate(domain=domain, name=name_from_domain(domain), metrics=metrics))
        return Discovery(provider=self.name, origin="dataforseo", target=target, candidates=candidates)

    def _call(self, tasks: list[dict]) -> list:
        try:
            response = self._client.post(self.base_url + COMPETITORS_PATH, json=tasks, headers=self._headers)
        except httpx.TimeoutException as exc:
            raise _Transient("no answer in time") from exc
        except httpx.HTTPError as exc:
            raise _Transient(f"could not be reached ({type(exc).__name__})") from exc
        status = response.status_code
        if status in (401, 403):
            raise ProviderError(f"DataForSEO refused the credentials (HTTP {status}).")
        if status == 402:
            raise ProviderError("DataForSEO refused the call: the account cannot pay for it (HTTP 402).")
        if status == 429:
            raise _Transient("rate limited (HTTP 429)", _retry_after(response))
        if status >= 500:
            raise _Transient(f"server error (HTTP {status})", _retry_after(response))
        try:
            body = response.json()
        except ValueError as exc:
            raise _Transient("the answer was not JSON") from exc
        if not isinstance(body, dict):
            raise ProviderError("DataForSEO answered with an unexpected shape.")
        self._check(body.get("status_code"), body.get("status_message"), response)
        tasks_out = body.get("tasks")
        if not isinstance(tasks_out, list) or not tasks_out or not isinstance(tasks_out[0], dict):
            raise ProviderError("DataForSEO answered without a task.")
        self._check(tasks_out[0].get("status_code"), tasks_out[0].get("status_message"), response)
        result = tasks_out[0].get("result") or []
        if not result or not isinstance(result[0], dict):
            return []  # the target has no competitors in their data
        items = result[0].get("items") or []
        return items if isinstance(items, list) else []

    @staticmethod
    def _check(code: Any, message: Any, response: httpx.Response) -> None:
        if not isinstance(code, int):
            raise ProviderError("DataForSEO answered without a status_code.")
        text = f"{code} {message or ''}".strip()
        if code == OK:
            return
        if code in AUTH_CODES:
            raise ProviderError(f"DataForSEO refused the credentials ({text}).")
        if code in PAYMENT_CODES:
            raise ProviderError(f"DataForSEO refused the call: the account cannot pay for it ({text}).")
        if code == RATE_LIMIT_CODE:
            raise _Transient(f"rate limited ({text})", _retry_after(response))
        if 50000 <= code < 51000:
            raise _Transient(f"server error ({text})")
        raise ProviderError(f"DataForSEO refused the task ({text}).")


# --- Local: the brand's own website -------------------------------------------------------------------


class _Links(HTMLParser):
    def __init__(self) -> None:
        super().__init__(convert_charrefs=True)
        self.hrefs: list[str] = []

    def handle_starttag(self, tag, attrs) -> None:
        if tag == "a":
            href = dict(attrs).get("href")
            if href:
                self.hrefs.append(href.strip())


class LocalSEOProvider:
    """Candidates from the links of the brand's website, fetched here (an honest, partial signal:
    a site links to partners and press as well as rivals, so the owner curates the result)."""

    name = "local"

    def competitors(self, *, target_domain: str, website_url: str) -> Discovery:
        own = registrable_domain(target_domain) or normalize_domain(target_domain)
        if not website_url:
            raise ProviderError("The local SEO provider reads the brand's website, and the brand has none.")
        try:
            page = fetch(website_url, max_bytes=WEBSITE_MAX_BYTES)
        except UnsafeURL as exc:
            raise ProviderError(f"The website URL may not be fetched: {exc}") from exc
        except OutboundError as exc:
            raise ProviderUnavailable(f"The website could not be reached ({exc}).") from exc
        if page.status_code >= 400:
            raise ProviderUnavailable(f"The website answered HTTP {page.status_code}.")
        parser = _Links()
        try:
            parser.feed(page.text)
            parser.close()
        except Exception:  # html.parser can trip on pathological markup: keep what was read
            logger.info("The website of %s did not parse to the end", own)
        counts: dict[str, int] = {}
        for href in parser.hrefs:
            url = urljoin(page.url, href)
            if not url.startswith(("http://", "https://")):
                continue
            domain = registrable_domain(url)
            if domain and domain != own and domain not in NOT_COMPETITORS:
                counts[domain] = counts.get(domain, 0) + 1
        ranked = sorted(counts.items(), key=lambda kv: (-kv[1], kv[0]))[: settings.SEO_DISCOVERY_LIMIT]
        return Discovery(
            provider=self.name,
            origin="local_crawl",
            target=own,
            candidates=[Candidate(domain=d, name=name_from_domain(d), metrics={"links": n}) for d, n in ranked],
            source_url=page.url,
        )


def get_seo_provider() -> SEOProvider:
    if settings.SEO_PROVIDER == "dataforseo":
        return DataForSEOProvider()
    return LocalSEOProvider()
