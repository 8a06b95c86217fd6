"""The free public tools: creative brief, brief suggestions, taglines (through the language model)
and the website facts for an e-mail signature (a real, SSRF-safe fetch of the page).
"""

from __future__ import annotations

import json
from typing import Any
from urllib.parse import urlsplit

from rest_framework import serializers

from assistant.domain.catalogue import CHANNELS, OBJECTIVES
from assistant.providers.llm import get_llm_provider
from core.http.errors import ProviderError
from core.http.outbound import OutboundError, UnsafeURL, fetch
from scrapers.html_facts import extract_page_facts

MAX_PAGE_BYTES = 2 * 1024 * 1024
TOOL_MAX_TOKENS = 1200


class PageUnavailable(ValueError):
    """The URL cannot be scraped: unreachable, an HTTP error, not HTML, or malformed. A 422 on `url`."""


# --- Asking the language model for JSON ----------------------------------------------------------


def _ask_json(*, task: str, instructions: str, inputs: dict[str, Any], shape: type[serializers.Serializer]):
    """Ask for one JSON object of `shape`; return (validated data, model). A bad answer is a ProviderError."""
    system = (
        f"Task: {task}\n{instructions}\n"
        "Answer with one JSON object only, no prose. The user message holds the inputs as JSON."
    )
    reply = get_llm_provider().complete(
        system=system,
        messages=[{"role": "user", "content": json.dumps(inputs, ensure_ascii=False)}],
        max_tokens=TOOL_MAX_TOKENS,
        json_mode=True,
    )
    try:
        data = json.loads(reply.text)
    except ValueError as exc:
        raise ProviderError("The language model did not answer with JSON.") from exc
    checked = shape(data=data)
    if not isinstance(data, dict) or not checked.is_valid():
        raise ProviderError("The language model answered in an unexpected shape.")
    return checked.validated_data, reply.model


class _Deliverable(serializers.Serializer):
    channel = serializers.CharField(max_length=100)
    format = serializers.CharField(max_length=1000)
    description = serializers.CharField(max_length=4000)


class _BriefDraft(serializers.Serializer):
    summary = serializers.CharField(max_length=4000)
    key_message = serializers.CharField(max_length=2000)
    tone = serializers.ListField(child=serializers.CharField(max_length=200), max_length=20)
    channels = serializers.ListField(child=serializers.CharField(max_length=100), required=False, default=list)
    deliverables = serializers.ListField(child=_Deliverable(), max_length=30)
    kpis = serializers.ListField(child=serializers.CharField(max_length=500), max_length=20)
    timeline = serializers.ListField(child=serializers.CharField(max_length=1000), max_length=20)


class _SuggestionsDraft(serializers.Serializer):
    objectives = serializers.ListField(child=serializers.CharField(max_length=100), max_length=30)
    audiences = serializers.ListField(child=serializers.CharField(max_length=1000), max_length=30)
    channels = serializers.ListField(child=serializers.CharField(max_length=100), max_length=30)


class _TaglinesDraft(serializers.Serializer):
    taglines = serializers.ListField(child=serializers.CharField(max_length=1000), min_length=1, max_length=30)


# --- Tools ------------------------------------------------------------------------------------------


def brand_from_website(url: str) -> str:
    """`https://www.acme-gear.co.uk/x` → "Acme Gear": a name to use when only a website is given."""
    host = (urlsplit(url).hostname or "").removeprefix("www.")
    label = host.split(".")[0] if host else ""
    return " ".join(part.capitalize() for part in label.replace("_", "-").split("-") if part) or host


def brief_generate(
    *, brand_name: str, website: str, objective: str, audience: str, channels: list[str]
) -> dict[str, Any]:
    brand = brand_name or brand_from_website(website)
    inputs = {
        "brand_name": brand,
        "website": website,
        "objective": objective,
        "audience": audience,
        "channels": channels,
    }
    draft, model = _ask_json(
        task="creative_brief",
        instructions=(
            "Write a creative brief for the brand. Keys: summary (one sentence), key_message, tone (list of "
            "adjectives), channels (the input channels, or the best ones from "
            f"{', '.join(CHANNELS)} when none are given), deliverables (list of {{channel, format, description}}, "
            "one per channel), kpis (list), timeline (list of steps)."
        ),
        inputs=inputs,
        shape=_BriefDraft,
    )
    chosen = channels or [c for c in draft["channels"] if c in CHANNELS]
    return {
        "brand_name": brand,
        "website": website or None,
        "objective": objective,
        "audience": audience or None,
        "channels": chosen,
        "summary": draft["summary"],
        "key_message": draft["key_message"],
        "tone": draft["tone"],
        "deliverables": draft["deliverables"],
        "kpis": draft["kpis"],
        "timeline": draft["timeline"],
        "model": model,
    }


def brief_suggestions(*, query: str) -> dict[str, Any]:
    draft, model = _ask_json(
        task="brief_suggestions",
        instructions=(
            "Suggest campaign objectives (from: "
            f"{', '.join(OBJECTIVES)}), target audiences (short phrases) and channels (from: {', '.join(CHANNELS)}) "
            "for the business or product named in `query` (general suggestions when it is empty), best first. "
            "Keys: objectives, audiences, channels."
        ),
        inputs={"query": query},
        shape=_SuggestionsDraft,
    )
    return {
        "query": query,
        "objectives": list(dict.fromkeys(o for o in draft["objectives"] if o in OBJECTIVES)),
        "audiences": list(dict.fromkeys(draft["audiences"])),
        "channels": list(dict.fromkeys(c for c in draft["channels"] if c in CHANNELS)),
        "model": model,
    }


def taglines_generate(*, brand_name: str, description: str, tone: str, count: int) -> dict[str, Any]:
    draft, model = _ask_json(
        task="taglines",
        instructions=(
            f"Write {count} distinct short taglines (at most 10 words each) for the brand, in a {tone} tone, "
            "for an e-mail signature. Key: taglines (list of strings)."
        ),
        inputs={"brand_name": brand_name, "description": description, "tone": tone, "count": count},
        shape=_TaglinesDraft,
    )
    taglines = list(dict.fromkeys(t.strip() for t in draft["taglines"] if t.strip()))[:count]
    if not taglines:
        raise ProviderError("The language model wrote no taglines.")
    return {"brand_name": brand_name, "tone": tone, "taglines": taglines, "model": model}


def website_facts(*, url: str) -> dict[str, Any]:
    """Fetch the page (core.http.outbound: private addresses refused unless allowed, the call pinned to the
    checked address, every redirect re-checked, OUTBOUND_PAGE_DEADLINE_SECONDS in all, 2 MiB cap)
    and read its facts. Raises core.http.outbound.UnsafeURL or PageUnavailable.
    """
    try:
        page = fetch(url, schemes=("http", "https"), max_bytes=MAX_PAGE_BYTES)
    except UnsafeURL:
        raise
    except OutboundError as exc:
        if "timed out" in str(exc):
            raise PageUnavailable("The website did not answer in time.") from exc
        raise PageUnavailable("The website could not be reached.") from exc
    if not 200 <= page.status_code < 300:
        raise PageUnavailable(f"The website answered HTTP {page.status_code}.")
    content_type = page.headers.get("content-type", "").split(";", 1)[0].strip().lower()
    if content_type and "html" not in content_type:
        raise PageUnavailable(f"The URL is not an HTML page (it is {content_type}).")
    if not content_type and b"<" not in page.content[:1024]:
        raise PageUnavailable("The URL is not an HTML page.")
    return {"url": url, "final_url": page.url, "truncated": page.truncated, **extract_page_facts(page.text, page.url)}
