"""Brand classification by keyword rules over the brand's and its kits' own words.

The result is the versioned multi-label object of the brand's `classification` field: `industries`
(what the brand sells or does),
`business_models` (how it operates), the `primary_industry`, and `needs_review` when the text
gave too little to go on (nothing matched, or the top two industries tie).
"""

from __future__ import annotations

import re
from collections import Counter
from datetime import datetime
from itertools import pairwise

VERSION = "keyword-rules/1"
SOURCE = "keyword_rules"
MAX_LABELS = 3

INDUSTRIES: dict[str, tuple[str, ...]] = {
    "apparel_fashion": ("apparel", "fashion", "clothing", "shoes", "sneakers", "footwear", "jeans", "dresses"),
    "beauty_personal_care": ("beauty", "cosmetics", "skincare", "skin care", "makeup", "fragrance", "haircare"),
    "food_beverage": ("food", "beverage", "drinks", "coffee", "snacks", "restaurant", "bakery", "tea", "beer", "wine"),
    "software": ("software", "saas", "cloud", "api", "analytics", "automation", "crm", "developer", "app"),
    "financial_services": ("bank", "banking", "finance", "fintech", "payments", "insurance", "loans", "investing"),
    "health_wellness": ("health", "wellness", "fitness", "medical", "clinic", "pharmacy", "supplements", "yoga"),
    "travel_hospitality": ("travel", "hotel", "hotels", "flights", "airline", "vacation", "tourism", "booking"),
    "home_living": ("furniture", "home decor", "decor", "kitchen", "mattress", "garden", "interior"),
    "automotive": ("car", "cars", "automotive", "vehicle", "vehicles", "electric vehicle", "motorcycle"),
    "education": ("education", "courses", "learning", "school", "training", "tutoring", "students"),
    "media_entertainment": ("media", "entertainment", "music", "streaming", "games", "gaming", "film", "podcast"),
    "sports_outdoors": ("sports", "sport", "outdoor", "running", "cycling", "athletic", "athletes", "hiking"),
    "consumer_electronics": ("electronics", "gadgets", "smartphone", "laptop", "camera", "headphones", "audio"),
    "marketing_advertising": ("marketing", "advertising", "agency", "seo", "branding", "campaigns"),
    "real_estate": ("real estate", "property", "properties", "rentals", "mortgage", "apartments"),
    "pets": ("pet", "pets", "dog", "dogs", "cat", "cats", "veterinary"),
}

BUSINESS_MODELS: dict[str, tuple[str, ...]] = {
    "ecommerce": ("online store", "shop online", "ecommerce", "e-commerce", "free shipping", "checkout", "shop"),
    "subscription": ("subscription", "subscribe", "membership", "monthly plan", "per month"),
    "saas": ("saas", "software as a service", "free trial", "per seat", "dashboard"),
    "marketplace": ("marketplace", "sellers", "buyers", "vendors", "listings"),
    "b2b": ("b2b", "businesses", "enterprise", "teams", "companies", "clients"),
    "b2c": ("consumers", "customers", "shoppers", "families", "everyday"),
    "direct_to_consumer": ("direct to consumer", "direct-to-consumer", "dtc", "d2c"),
    "retail": ("retail", "retailer", "stores", "boutique"),
    "services": ("services", "consulting", "studio", "agency"),
}

_WORD = re.compile(r"[a-z0-9][a-z0-9&'+-]*")


def _phrases(text: str) -> Counter:
    """Counts of single words and two-word phrases in lower-cased text."""
    words = _WORD.findall(text.lower())
    counts = Counter(words)
    counts.update(f"{a} {b}" for a, b in pairwise(words))
    return counts


def _scores(weighted_texts: list[tuple[str, int]], rules: dict[str, tuple[str, ...]]) -> Counter:
    scores: Counter = Counter()
    for text, weight in weighted_texts:
        counts = _phrases(text)
        for label, keywords in rules.items():
            hits = sum(counts[k] for k in keywords)
            if hits:
                scores[label] += hits * weight
    return scores


def classify(*, name: str, industry: str, texts: list[str], now: datetime) -> tuple[dict, dict]:
    """(classification, scores). `industry` (the owner's own word for it) weighs three times, the
    name twice, the rest once."""
    weighted = [(industry, 3), (name, 2), *[(t, 1) for t in texts if t]]
    industry_scores = _scores(weighted, INDUSTRIES)
    model_scores = _scores(weighted, BUSINESS_MODELS)
    ranked = sorted(industry_scores.items(), key=lambda kv: (-kv[1], kv[0]))
    industries = [label for label, _ in ranked[:MAX_LABELS]]
    models = [label for label, _ in sorted(model_scores.items(), key=lambda kv: (-kv[1], kv[0]))[:MAX_LABELS]]
    tie = len(ranked) > 1 and ranked[0][1] == ranked[1][1]
    classification = {
        "primary_industry": industries[0] if industries else None,
        "industries": industries,
        "business_models": models,
        "version": VERSION,
        "source": SOURCE,
        "classified_at": now.isoformat().replace("+00:00", "Z"),
        "needs_review": not industries or tie or not models,
    }
    return classification, {"industries": dict(ranked), "business_models": dict(model_scores)}
