"""Name and domain normalisation, and the fuzzy duplicate rule for competitor names (docs/decisions.md#domain-rules).

Two names are the same competitor when their normalised forms are equal, or when rapidfuzz's
`token_sort_ratio` of the normalised forms is at least 90. Normalising: casefold, strip accents, a
trailing domain suffix (".com", ".co.uk", ...), punctuation, trailing legal suffixes (inc, llc,
ltd, gmbh, corp, co, ...) and a leading "the"; whitespace collapses.
"""

from __future__ import annotations

import re
import unicodedata
from collections.abc import Iterable
from functools import cache
from urllib.parse import urlsplit

import tldextract
from rapidfuzz import process
from rapidfuzz.distance import Indel

MATCH_THRESHOLD = 90

LEGAL_SUFFIXES = frozenset(
    {
        "inc",
        "incorporated",
        "llc",
        "ltd",
        "limited",
        "gmbh",
        "corp",
        "corporation",
        "co",
        "company",
        "plc",
        "llp",
        "ag",
        "sa",
        "sas",
        "srl",
        "bv",
        "nv",
        "pty",
        "oy",
        "ab",
    }
)
_DOMAIN_SUFFIX = re.compile(
    r"\.(?:com|net|org|io|co|ai|app|dev|shop|store|biz|info|xyz|tech|us|uk|de|fr|eu|ca|au|nl|es|it|in)"
    r"(?:\.(?:uk|au|nz|jp|br|in|za))?$"
)
_APOSTROPHES = re.compile("['\u2019`]")  # straight and typographic apostrophes
_NON_WORD = re.compile(r"[\W_]+")
_HOSTNAME = re.compile(r"^(?=.{1,253}$)(?!-)[a-z0-9-]{1,63}(?<!-)(?:\.(?!-)[a-z0-9-]{1,63}(?<!-))+$")


def normalize_name(name: str) -> str:
    text = unicodedata.normalize("NFKD", name.casefold().strip())
    text = "".join(ch for ch in text if not unicodedata.combining(ch))
    text = _DOMAIN_SUFFIX.sub("", text)
    text = _APOSTROPHES.sub("", text)
    tokens = _join_initials(_NON_WORD.sub(" ", text).split())
    while len(tokens) > 1 and tokens[-1] in LEGAL_SUFFIXES:
        tokens.pop()
    if len(tokens) > 1 and tokens[0] == "the":
        tokens.pop(0)
    normalized = " ".join(tokens)
    return normalized or name.casefold().strip()


def _join_initials(tokens: list[str]) -> list[str]:
    """Runs of single characters are one token: "s a" (from "S.A.") → "sa", "i b m" → "ibm"."""
    out: list[str] = []
    run: list[str] = []
    for token in [*tokens, ""]:
        if len(token) == 1:
            run.append(token)
            continue
        if len(run) > 1:
            out.append("".join(run))
        else:
            out.extend(run)
        run = []
        if token:
            out.append(token)
    return out


def normalize_domain(value: str) -> str:
    """`https://www.Example.com/x` or `WWW.example.com` → `example.com`; "" when it is not a host name."""
    text = value.strip().lower()
    if not text:
        return ""
    if "//" not in text:
        text = "//" + text
    try:
        host = urlsplit(text).hostname or ""
    except ValueError:
        return ""
    host = host.rstrip(".").removeprefix("www.")
    return host if _HOSTNAME.match(host) else ""


def _sorted_tokens(key: str) -> str:
    return " ".join(sorted(key.split()))


@cache
def _partner_lengths(n: int) -> range:
    """The lengths m a string of length n can reach MATCH_THRESHOLD with: the Indel ratio is at most
    2·min/(n+m), so 200·min(n, m) >= 90·(n+m), i.e. 9n/11 <= m <= 11n/9."""
    return range(-(-9 * n // 11), 11 * n // 9 + 1)


def _max_distance(a: int, b: int) -> int:
    """The largest Indel distance (insertions + deletions) at which strings of lengths a and b still
    reach the threshold: ratio = 100·(1 - d/(a+b)) >= 90 exactly when 10·d <= a+b."""
    return (a + b) // 10


@cache
def _segments(n: int) -> tuple[tuple[int, int, int], ...] | None:
    """(part, start, length) of the k+1 even parts a string of length n is indexed by, where k is the
    largest distance any partner of it may be at; None when it is too short to split."""
    parts = _max_distance(n, _partner_lengths(n)[-1]) + 1
    if parts > n:
        return None
    short, longer = divmod(n, parts)
    out, start = [], 0
    for i in range(parts):
        length = short + (1 if i >= parts - longer else 0)
        out.append((i, start, length))
        start += length
    return tuple(out)


@cache
def _probes(la: int) -> tuple[tuple[int, tuple[tuple[int, int, int], ...]], ...]:
    """For a query of length la: each partner length lb with the (part, start, end) slices of the
    query to look up among that length's parts. Part i of a partner is looked for only as the first
    untouched one: the i parts before it hold an edit each, so at most k - i edits follow it and its
    shift is within k - i of the length difference; and within i of zero (PassJoin's multi-match-aware
    selection: a pair with more edits before part i is found through a later part), and within the
    slack overall. tests/brands/test_matching.py compares the index with a brute-force scan."""
    out = []
    for lb in _partner_lengths(la):
        segments, delta, k = _segments(lb), la - lb, _max_distance(la, lb)
        if abs(delta) > k:
            continue
        probes = []
        if segments is not None:
            slack = (k - abs(delta)) // 2  # shifts beyond it need more edits than k
            low, high = min(0, delta) - slack, max(0, delta) + slack
            for i, start, length in segments[: k + 1]:
                first_low = max(low, -i, delta - (k - i))
                first_high = min(high, i, delta + (k - i))
                for pos in range(max(0, start + first_low), min(la - length, start + first_high) + 1):
                    probes.append((i, pos, pos + length))
        out.append((lb, tuple(probes)))
    return tuple(out)


class NameIndex:
    """The normalised names of a set of rows, answering "does this name duplicate one of them?".

    Exact keys are a dict look-up. Only a name without an exact hit is scored, and only against the
    indexed keys that can reach the threshold, found without scanning (a partition filter, as in
    PassJoin): a key of length n is cut into k+1 parts, k the largest Indel distance any partner may
    be at. A string within distance d <= k of it leaves at least one part untouched (each insertion
    or deletion falls into one part), and that part appears in the string at its own offset moved
    by the insertions minus deletions before it. So a query looks up, for each compatible length and
    part, the few substrings of itself at those offsets (a plan per query length, computed once); the
    keys found are scored together with rapidfuzz in C. Adding a key is k+1 dict appends; nothing is
    rebuilt, and Python's work per query is bounded. What still grows with the index is the number of
    candidates scored in C: names that share a trade word ("Kalomi Running", "Torexa Running") share
    the parts inside it, and no exact filter of this kind can tell them apart at 90 on strings this
    short. On the bench's names, merging 8,000 kit names costs ~4x what 2,000 do, and serving the
    roster 3.2-3.3x (tests/security/test_competitor_merge_scaling.py; quadratic before).
    `token_sort_ratio(a, b)` equals `ratio` of the token-sorted strings, so keys are token-sorted once here
    instead of on every comparison.
    """

    def __init__(self, keys: Iterable[str] = ()) -> None:
        self._keys: dict[str, str] = {}  # token-sorted key -> key as added
        self._parts: dict[tuple[int, int, str], list[str]] = {}  # (length, part, text) -> keys
        self._short: dict[int, list[str]] = {}  # length -> keys too short to split
        self._lengths: set[int] = set()
        for key in keys:
            self.add(key)

    def add(self, key: str) -> None:
        sorted_key = _sorted_tokens(key)
        if sorted_key in self._keys:
            return
        self._keys[sorted_key] = key
        n = len(sorted_key)
        self._lengths.add(n)
        segments = _segments(n)
        if segments is None:
            self._short.setdefault(n, []).append(sorted_key)
            return
        for i, start, length in segments:
            self._parts.setdefault((n, i, sorted_key[start : start + length]), []).append(sorted_key)

    def match(self, key: str) -> str | None:
        """The key of an indexed name this one duplicates (the first found), or None.

        For each compatible length, the buckets the query's slices hit are scored together by
        rapidfuzz in C (`extractOne`, Indel distance with that length's cut-off: ratio >= 90 exactly
        when 10·d <= la + lb), so Python's work per query is the number of look-ups, not the number
        of candidates."""
        query = _sorted_tokens(key)
        if query in self._keys:
            return self._keys[query]
        parts, short, lengths, la = self._parts, self._short, self._lengths, len(query)
        for lb, probes in _probes(la):
            if lb not in lengths:
                continue
            found = [short[lb]] if lb in short else []
            for i, pos, end in probes:
                bucket = parts.get((lb, i, query[pos:end]))
                if bucket:
                    found.append(bucket)
            if not found:
                continue
            candidates = found[0] if len(found) == 1 else set().union(*found)
            hit = process.extractOne(
                query, candidates, scorer=Indel.distance, processor=None, score_cutoff=_max_distance(la, lb)
            )
            if hit:
                return self._keys[hit[0]]
        return None

    def __contains__(self, key: str) -> bool:
        return self.match(key) is not None


# --- One company under two names or hosts (discovery's deduplication, docs/decisions.md#competitor-discovery) ----

# Trailing words that name a company's line of business or structure rather than the company:
# "Ford Motor Company" is Ford, "Meta Platforms" is Meta. Only trailing ones go, and one word always stays.
CORPORATE_WORDS = frozenset(
    {
        "motor",
        "motors",
        "platforms",
        "group",
        "holdings",
        "holding",
        "international",
        "global",
        "worldwide",
        "brands",
        "industries",
        "enterprises",
        "technologies",
        "systems",
    }
)


def _plain_tokens(name: str) -> list[str]:
    text = unicodedata.normalize("NFKD", name.casefold().strip())
    text = "".join(ch for ch in text if not unicodedata.combining(ch))
    text = _APOSTROPHES.sub("", _DOMAIN_SUFFIX.sub("", text))
    return _NON_WORD.sub(" ", text).split()


def identity_keys(name: str) -> frozenset[str]:
    """The forms under which a company name is compared with another: its normalised name, that name
    without trailing corporate words ("ford motor" → "ford"), and the name written as one word before
    legal suffixes go ("Pepsi Co" and "PepsiCo" → "pepsico")."""
    key = normalize_name(name)
    keys = {key, key.replace(" ", "")}
    core = key.split()
    while len(core) > 1 and core[-1] in CORPORATE_WORDS:
        core.pop()
    keys.add(" ".join(core))
    if joined := "".join(_plain_tokens(name)):
        keys.add(joined)
    return frozenset(k for k in keys if k)


def same_company(a: str, b: str) -> bool:
    """Two names of one company: a shared identity key, or the roster's fuzzy rule on the normalised names."""
    if identity_keys(a) & identity_keys(b):
        return True
    return NameIndex([normalize_name(a)]).match(normalize_name(b)) is not None


@cache
def _suffix_list():
    """tldextract on the Public Suffix List snapshot it ships: no suffix list is fetched at run time."""
    return tldextract.TLDExtract(suffix_list_urls=(), cache_dir=None, include_psl_private_domains=False)


def registrable_domain(value: str) -> str:
    """`https://shop.pepsico.co.uk/x` → `pepsico.co.uk`: the host a company registered, under its public
    suffix; "" for what is not a public host name (an IP address, `localhost`, a bare suffix)."""
    host = normalize_domain(value)
    if not host:
        return ""
    parts = _suffix_list()(host)
    if not parts.suffix or not parts.domain:
        return ""
    return f"{parts.domain}.{parts.suffix}"


def name_from_domain(domain: str) -> str:
    """A display name for a discovered domain with no other name: `pepsico.com` → `Pepsico`."""
    label = registrable_domain(domain).split(".", 1)[0] or domain
    return " ".join(part.capitalize() for part in label.split("-") if part) or domain
