"""Keyword extraction for the SEO audit: frequent content words and two-word phrases."""

from __future__ import annotations

import re
from collections import Counter
from itertools import pairwise

_STOPWORD_TEXT = """a about above after again all also am an and any are as at be because been before being below
    between both but by can could did do does doing down during each few for from further had has have
    having he her here hers him his how i if in into is it its itself just me more most my no nor not of
    off on once only or other our ours out over own same she should so some such than that the their
    theirs them then there these they this those through to too under until up very was we were what
    when where which while who whom why will with you your yours us get make made new one two every"""
STOPWORDS = frozenset(_STOPWORD_TEXT.split())
_WORD = re.compile(r"[a-z][a-z0-9'-]{2,}")


def top_keywords(texts: list[str], *, limit: int) -> list[dict]:
    """[{"term", "count"}], most frequent first (ties alphabetical); phrases need two sightings."""
    words: Counter = Counter()
    phrases: Counter = Counter()
    for text in texts:
        tokens = [t.strip("'-") for t in _WORD.findall((text or "").lower())]
        tokens = [t for t in tokens if t and t not in STOPWORDS]
        words.update(tokens)
        phrases.update(f"{a} {b}" for a, b in pairwise(tokens))
    terms = Counter(words)
    terms.update({p: c for p, c in phrases.items() if c >= 2})
    ranked = sorted(terms.items(), key=lambda kv: (-kv[1], kv[0]))[:limit]
    return [{"term": term, "count": count} for term, count in ranked]
