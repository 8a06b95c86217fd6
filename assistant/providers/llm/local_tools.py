"""What the local model writes for the free tools: JSON built from the inputs with templates."""

from __future__ import annotations

import hashlib
import re
from typing import Any

from assistant.domain.catalogue import CHANNELS, OBJECTIVES

_WORD = re.compile(r"[A-Za-z][A-Za-z'-]{2,}")
_STOPWORD_TEXT = (
    "the and for with that this from your our you are was were have has had not but all any can will "
    "into about over more most than then them they their there what when which who why how its it's "
    "also just very much many some such only own same other each every both few out off use used "
    "make makes made best new get got like want need help please tell give show would could should"
)
_STOPWORDS = frozenset(_STOPWORD_TEXT.split())


def keywords(text: str, limit: int = 3) -> list[str]:
    seen: list[str] = []
    for word in _WORD.findall(text or ""):
        lowered = word.lower()
        if lowered not in _STOPWORDS and lowered not in seen and len(lowered) <= 24:  # no run-on "words"
            seen.append(lowered)
    return sorted(seen, key=lambda w: (-len(w), seen.index(w)))[:limit]


def _pick(options: list[str], seed: str, count: int) -> list[str]:
    """`count` options in an order fixed by `seed` (a rotation, so nothing repeats)."""
    start = int(hashlib.sha256(seed.encode()).hexdigest(), 16) % len(options)
    rotated = options[start:] + options[:start]
    return rotated[:count]


_FORMATS = {
    "instagram": ("Feed post and Reel", "A 4:5 carousel and a 9:16 Reel of 15 s"),
    "facebook": ("Feed ad", "A 1:1 image ad and a 4:5 video of 15 s with captions"),
    "tiktok": ("In-feed video", "A 9:16 native-style video of 9-15 s, hook in the first second"),
    "youtube": ("Video ad", "A 6 s bumper and a 30 s skippable spot"),
    "linkedin": ("Sponsored content", "A single-image post and a document ad for decision makers"),
    "x": ("Promoted post", "A short text post with a 16:9 image"),
    "pinterest": ("Standard pin", "A 2:3 pin set, each pointing to a product page"),
    "google_search": ("Responsive search ad", "15 headlines and 4 descriptions around the key message"),
    "display": ("Banner set", "300x250, 728x90 and 160x600 banners sharing one visual"),
    "email": ("E-mail", "A 3-message sequence: introduction, proof, offer"),
    "influencers": ("Creator content", "3 creators, one post and one story each, with usage rights"),
    "podcasts": ("Host-read spot", "A 30 s host-read script with a memorable code"),
    "out_of_home": ("Poster", "A 6-sheet poster: one image, at most seven words"),
}
_KPIS = {
    "awareness": ["Reach", "Frequency", "Ad recall lift"],
    "consideration": ["Click-through rate", "Engaged sessions", "Video completion rate"],
    "leads": ["Cost per lead", "Lead volume", "Lead-to-qualified rate"],
    "sales": ["Return on ad spend", "Cost per acquisition", "Conversion rate"],
    "app_installs": ["Cost per install", "Installs", "Day-7 retention"],
    "retention": ["Repeat purchase rate", "Churn rate", "E-mail click rate"],
    "launch": ["Launch-week reach", "Sign-ups", "Share of voice"],
}
_DEFAULT_CHANNELS = {
    "awareness": ["instagram", "youtube", "out_of_home"],
    "consideration": ["instagram", "youtube", "google_search"],
    "leads": ["linkedin", "google_search", "email"],
    "sales": ["google_search", "instagram", "email"],
    "app_installs": ["tiktok", "instagram", "google_search"],
    "retention": ["email", "instagram"],
    "launch": ["instagram", "tiktok", "influencers"],
}
_TONE = {
    "awareness": ["Bold", "Memorable", "Warm"],
    "consideration": ["Helpful", "Confident", "Clear"],
    "leads": ["Expert", "Direct", "Trustworthy"],
    "sales": ["Urgent", "Clear", "Benefit-led"],
    "app_installs": ["Energetic", "Simple", "Playful"],
    "retention": ["Appreciative", "Personal", "Warm"],
    "launch": ["Exciting", "Bold", "Curious"],
}
_MESSAGES = {
    "awareness": "{brand} is the name {audience} will remember.",
    "consideration": "{brand} gives {audience} a better way to choose.",
    "leads": "Talk to {brand}: the expertise {audience} are looking for.",
    "sales": "Get {brand} today: made for {audience}.",
    "app_installs": "Everything {audience} need, in the {brand} app.",
    "retention": "{brand} keeps getting better for {audience} like you.",
    "launch": "Meet the new {brand}, built for {audience}.",
}


def creative_brief(data: dict[str, Any]) -> dict[str, Any]:
    brand = str(data.get("brand_name") or "The brand")
    objective = data.get("objective") if data.get("objective") in OBJECTIVES else "awareness"
    audience = str(data.get("audience") or "").strip() or "its core customers"
    channels = [c for c in data.get("channels") or [] if c in CHANNELS] or _DEFAULT_CHANNELS[objective]
    channel_names = ", ".join(CHANNELS[c] for c in channels)
    return {
        "summary": (
            f"A {OBJECTIVES[objective].lower()} campaign for {brand} that reaches {audience} on {channel_names}, "
            f"measured by {_KPIS[objective][0].lower()}."
        ),
        "key_message": _MESSAGES[objective].format(brand=brand, audience=audience),
        "tone": _TONE[objective],
        "channels": channels,
        "deliverables": [{"channel": c, "format": _FORMATS[c][0], "description": _FORMATS[c][1]} for c in channels],
        "kpis": _KPIS[objective],
        "timeline": [
            "Week 1: brief sign-off and concepts",
            "Week 2: production of the core assets",
            f"Weeks 3-6: live on {channel_names}",
            "Week 7: results read-out and next steps",
        ],
    }


_AUDIENCE_TEMPLATES = [
    "People actively searching for {q}",
    "First-time {q} buyers aged 25-44",
    "Lapsed {q} customers from the last 12 months",
    "Fans of competing {q} brands",
    "Professionals who recommend {q} to others",
]
_GENERIC_AUDIENCES = [
    "Existing customers and newsletter subscribers",
    "Lookalikes of your best customers",
    "Website visitors from the last 30 days",
    "Adults 25-44 in your main cities",
]
_OBJECTIVE_HINTS = {
    "launch": ("launch", "new", "release", "opening"),
    "app_installs": ("app", "mobile", "download"),
    "leads": ("b2b", "saas", "lead", "demo", "consulting", "service"),
    "sales": ("shop", "store", "ecommerce", "sale", "product", "fashion", "food", "coffee"),
    "retention": ("loyal", "subscription", "member", "repeat", "churn"),
}
_CHANNEL_HINTS = {
    "linkedin": ("b2b", "saas", "software", "consulting", "recruit"),
    "pinterest": ("fashion", "home", "decor", "wedding", "recipe", "food"),
    "tiktok": ("gen", "teen", "music", "beauty", "game", "gaming"),
    "google_search": ("service", "local", "repair", "insurance", "software"),
    "youtube": ("tutorial", "how", "tech", "review", "travel"),
}


def brief_suggestions(data: dict[str, Any]) -> dict[str, Any]:
    query = str(data.get("query") or "").strip()
    words = set(_WORD.findall(query.casefold()))
    objectives = [o for o, hints in _OBJECTIVE_HINTS.items() if words & set(hints)]
    objectives += [o for o in OBJECTIVES if o not in objectives]
    channels = [c for c, hints in _CHANNEL_HINTS.items() if words & set(hints)]
    channels += [c for c in ("instagram", "google_search", "email", "facebook", "youtube") if c not in channels]
    if query:
        audiences = [t.format(q=query) for t in _AUDIENCE_TEMPLATES] + _GENERIC_AUDIENCES[:1]
    else:
        audiences = list(_GENERIC_AUDIENCES)
    return {"objectives": objectives, "audiences": audiences, "channels": channels[:6]}


_TAGLINES = {
    "friendly": [
        "{brand}: here for you, every day.",
        "Say hello to better {topic}.",
        "{brand} makes {topic} feel easy.",
        "Good {topic}, good people. {brand}.",
        "Your {topic}, with a smile.",
        "{brand}. Like a friend who knows {topic}.",
    ],
    "bold": [
        "{brand}. No half measures.",
        "{topic}, rewritten.",
        "Go bigger with {brand}.",
        "Built to lead. {brand}.",
        "Louder {topic}. {brand}.",
        "{brand}: dare to {topic_verb}.",
    ],
    "premium": [
        "{brand}. Crafted without compromise.",
        "The art of {topic}.",
        "{brand}: quiet excellence.",
        "Refined {topic}, since day one.",
        "Exceptional {topic}, by {brand}.",
        "{brand}. For those who notice.",
    ],
    "playful": [
        "{brand}: seriously fun {topic}.",
        "Who knew {topic} could be this much fun?",
        "{brand} puts the wow in {topic}.",
        "Less fuss, more {topic}.",
        "Go on, treat yourself to {brand}.",
        "{brand}. Happy {topic} starts here.",
    ],
    "professional": [
        "{brand}: {topic} you can rely on.",
        "Smarter {topic} for growing teams.",
        "{brand}. Results, delivered.",
        "Trusted {topic} expertise.",
        "{brand}: built for the way you work.",
        "Clear {topic}. Measurable results.",
    ],
}
_GENERIC_TAGLINES = [
    "{brand}. Made for you.",
    "Better {topic} starts with {brand}.",
    "{brand}: the {topic} people talk about.",
    "Think {topic}. Think {brand}.",
    "{brand}, simply.",
    "Everything {topic} should be.",
]


def taglines(data: dict[str, Any]) -> dict[str, Any]:
    brand = str(data.get("brand_name") or "Your brand").strip()
    tone = data.get("tone") if data.get("tone") in _TAGLINES else "friendly"
    count = data.get("count") if isinstance(data.get("count"), int) and 1 <= data.get("count") <= 12 else 5
    found = keywords(str(data.get("description") or ""), 1)
    topic = found[0] if found else "everything"
    fill = {"brand": brand, "topic": topic, "topic_verb": "do more"}
    tone_lines = _pick(_TAGLINES[tone], brand + tone + topic, len(_TAGLINES[tone]))
    lines = [line.format(**fill) for line in tone_lines + _GENERIC_TAGLINES]
    return {"taglines": [line[0].upper() + line[1:] for line in lines[:count]]}
