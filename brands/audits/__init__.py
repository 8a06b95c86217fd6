"""The brand audits, one per research module. Each works on this machine with what the brand, its
kits, its competitors and (when configured) its website give it, and returns an AuditOutcome for
the artifact, or raises AuditFailed with a message for the owner.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Callable

from django.utils import timezone

from brands.audits.classification import classify
from brands.audits.outcome import AuditFailed, AuditOutcome
from brands.audits.text import top_keywords
from brands.models import Brand, CompetitorSource, ResearchModule, TrackedGroupMember
from brands.selectors.competitors import competitor_roster
from brands.services.competitors import competitors_discover
from brands.services.discovery import competitors_discovery_run
from core.http.errors import ProviderError, ProviderUnavailable
from core.http.outbound import OutboundError, UnsafeURL, fetch
from scrapers.html_facts import extract_page_facts

WEBSITE_MAX_BYTES = 2 * 1024 * 1024


def _kit_texts(brand: Brand) -> list[str]:
    texts = [brand.description]
    for kit in brand.kits.all():
        texts += [kit.name, kit.tagline, kit.voice, kit.description, " ".join(kit.audiences), " ".join(kit.keywords)]
    return [t for t in texts if t]


def audit_brand_classification(brand: Brand) -> AuditOutcome:
    classification, scores = classify(
        name=brand.name, industry=brand.industry, texts=_kit_texts(brand), now=timezone.now()
    )
    Brand.objects.filter(id=brand.id).update(brand_classification=classification)
    primary = classification["primary_industry"] or "no industry recognised"
    models = ", ".join(classification["business_models"]) or "none"
    return AuditOutcome(
        title="Brand classification",
        summary=f"Primary industry: {primary}; business models: {models}.",
        data={"classification": classification, "scores": scores},
    )


def audit_competitors(brand: Brand) -> AuditOutcome:
    """A discovery run first (docs/decisions.md#competitor-discovery): a provider that fails is reported in the
    artifact's `discovery` and the rest of the audit still runs on the rows the brand has."""
    try:
        discovery = competitors_discovery_run(brand_id=brand.id)
    except (ProviderError, ProviderUnavailable) as exc:
        discovery = {"status": "failed", "error": exc.message, "retryable": isinstance(exc, ProviderUnavailable)}
    summary = competitors_discover(brand=brand)
    summary["discovery"] = discovery
    found = f"; discovery: {len(discovery['added'])} new" if discovery["status"] == "completed" else ""
    return AuditOutcome(
        title="Competitor discovery",
        summary=(
            f"{summary['roster_size']} competitors ({summary['discovered']} discovered, {summary['manual']} added "
            f"by hand, {summary['seeded']} seeded, {summary['brand_kit_names']} from brand kits); "
            f"{len(summary['adopted'])} adopted{found}."
        ),
        data=summary,
    )


def _page(brand: Brand) -> dict:
    """Fetch the brand's website and read its facts; AuditFailed says why it could not be read."""
    if not brand.website_url:
        raise AuditFailed("The brand has no website URL.")
    try:
        result = fetch(brand.website_url, max_bytes=WEBSITE_MAX_BYTES)
    except UnsafeURL as exc:
        raise AuditFailed(f"The website URL may not be fetched: {exc}") from exc
    except OutboundError as exc:
        raise AuditFailed(f"The website could not be reached ({exc}).") from exc
    if result.status_code >= 400:
        raise AuditFailed(f"The website answered HTTP {result.status_code}.")
    return {
        "url": result.url,
        "status_code": result.status_code,
        "truncated": result.truncated,
        "facts": extract_page_facts(result.text, result.url),
    }


def audit_website(brand: Brand) -> AuditOutcome:
    page = _page(brand)
    facts = page["facts"]
    return AuditOutcome(
        title="Website facts",
        summary=f"{facts['title'] or page['url']}: {len(facts['headings'])} headings, "
        f"{len(facts['social_links'])} social profiles, {len(facts['colors'])} colours.",
        data=page,
    )


def _seo_checks(facts: dict) -> list[dict]:
    title = facts.get("title") or ""
    description = facts.get("description") or ""
    h1 = [h for h in facts.get("headings", []) if h.get("level") == 1]
    return [
        {"check": "title_present", "passed": bool(title)},
        {"check": "title_length_10_to_60", "passed": 10 <= len(title) <= 60, "value": len(title)},
        {"check": "meta_description_present", "passed": bool(description)},
        {"check": "meta_description_50_to_160", "passed": 50 <= len(description) <= 160, "value": len(description)},
        {"check": "exactly_one_h1", "passed": len(h1) == 1, "value": len(h1)},
    ]


def audit_seo(brand: Brand) -> AuditOutcome:
    """Keywords from the brand's own words; on-page checks when its website can be read."""
    texts = [brand.name, brand.industry, *_kit_texts(brand)]
    keywords = top_keywords(texts, limit=20)
    data: dict = {"keywords": keywords}
    summary = f"{len(keywords)} keywords from the brand's texts"
    page = None
    if brand.website_url:
        try:
            page = _page(brand)
        except AuditFailed as exc:  # the keywords still stand; say why the page checks are missing
            data["page_error"] = str(exc)
            summary += "; on-page checks unavailable"
    if page is not None:
        checks = _seo_checks(page["facts"])
        page_words = [page["facts"].get("title") or "", page["facts"].get("description") or ""]
        page_words += [h.get("text", "") for h in page["facts"].get("headings", [])]
        on_page = {k["term"] for k in top_keywords(page_words, limit=50)}
        data.update(
            url=page["url"],
            checks=checks,
            score=round(100 * sum(c["passed"] for c in checks) / len(checks)),
            keywords_on_page=[k["term"] for k in keywords if k["term"] in on_page],
        )
        summary += f"; on-page score {data['score']}/100"
    return AuditOutcome(title="SEO audit", summary=summary + ".", data=data)


def _platforms(links) -> set[str]:
    return {str(k) for k, v in links.items() if v} if isinstance(links, dict) else set()


def audit_organic_social(brand: Brand) -> AuditOutcome:
    """Where the brand is present on social platforms, against where its competitors are."""
    own = _platforms(brand.social_links)
    competitors = [r for r in competitor_roster(brand) if r["source"] == CompetitorSource.SEO_DISCOVERY]
    counts: Counter = Counter()
    for row in competitors:
        counts.update(_platforms(row["social_links"]))
    team_accounts = sum(
        len(kit.team.usable_connected_accounts) for kit in brand.kits.select_related("team") if kit.team is not None
    )
    gaps = sorted(p for p in counts if p not in own)
    return AuditOutcome(
        title="Organic social presence",
        summary=f"Present on {len(own)} platforms; competitors use {len(counts)}; gaps: {', '.join(gaps) or 'none'}.",
        data={
            "brand_platforms": sorted(own),
            "competitor_platforms": dict(counts.most_common()),
            "competitors_compared": len(competitors),
            "gaps": gaps,
            "connected_accounts": team_accounts,
        },
    )


def audit_paid_media(brand: Brand) -> AuditOutcome:
    """Which paid platforms the competitors advertise on, and the advertisers tracked for it."""
    competitors = [r for r in competitor_roster(brand) if r["source"] == CompetitorSource.SEO_DISCOVERY]
    counts: Counter = Counter()
    for row in competitors:
        counts.update(str(p) for p in row["active_paid_media_platforms"])
    tracked = (
        TrackedGroupMember.objects.filter(group__brand=brand, module__in=("", ResearchModule.PAID_MEDIA))
        .values_list("advertiser_id", flat=True)
        .distinct()
        .count()
    )
    active = [r["name"] for r in competitors if r["active_paid_media_platforms"]]
    return AuditOutcome(
        title="Paid media landscape",
        summary=f"{len(active)} of {len(competitors)} competitors advertise; top platforms: "
        f"{', '.join(p for p, _ in counts.most_common(3)) or 'none seen'}.",
        data={
            "platforms": dict(counts.most_common()),
            "advertising_competitors": active[:100],
            "competitors_compared": len(competitors),
            "tracked_advertisers": tracked,
        },
    )


AUDITS: dict[str, Callable[[Brand], AuditOutcome]] = {
    ResearchModule.COMPETITORS: audit_competitors,
    ResearchModule.BRAND_CLASSIFICATION: audit_brand_classification,
    ResearchModule.PAID_MEDIA: audit_paid_media,
    ResearchModule.ORGANIC_SOCIAL: audit_organic_social,
    ResearchModule.SEO: audit_seo,
    ResearchModule.WEBSITE: audit_website,
}
