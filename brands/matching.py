"""Name and domain normalisation, and the fuzzy duplicate rule for competitor names (CONTRACT §11).

Two names are the same competitor when their normalised forms are equal, or when rapidfuzz's
`token_sort_ratio` of the normalised forms is at least 90. Normalising: casefold, strip accents, a
trailing domain suffix (".com", ".co.uk", ...), punctuation, trailing legal suffixes (inc, llc,
ltd, gmbh, corp, co, ...) and a leading "the"; whitespace collapses.
"""

from __future__ import annotations

import re
import unicodedata
from collections.abc import Iterable
from urllib.parse import urlsplit

from rapidfuzz import fuzz, process

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


def is_hostname(value: str) -> bool:
    return bool(_HOSTNAME.match(value))


def _sorted_tokens(key: str) -> str:
    return " ".join(sorted(key.split()))


def _could_match(a: int, b: int) -> bool:
    """Whether strings of lengths a and b can reach MATCH_THRESHOLD at all: the Indel ratio is at
    most 2·min/(a+b), so far apart lengths are skipped without scoring."""
    return 200 * min(a, b) >= MATCH_THRESHOLD * (a + b)


class NameIndex:
    """The normalised names of a set of rows, answering "does this name duplicate one of them?".

    Exact keys are a dict look-up. Only a name without an exact hit is scored, with rapidfuzz in C
    (`extractOne` with a score cut-off) and only against keys whose length can reach the
    threshold. `token_sort_ratio(a, b)` equals `ratio` of the token-sorted strings, so keys are
    token-sorted once here instead of on every comparison.
    """

    def __init__(self, keys: Iterable[str] = ()) -> None:
        self._keys: dict[str, str] = {}  # token-sorted key -> key as added
        self._by_length: dict[int, list[str]] = {}
        self._windows: dict[int, list[str]] = {}
        for key in keys:
            self.add(key)

    def add(self, key: str) -> None:
        sorted_key = _sorted_tokens(key)
        if sorted_key not in self._keys:
            self._keys[sorted_key] = key
            self._by_length.setdefault(len(sorted_key), []).append(sorted_key)
            self._windows.clear()

    def _window(self, length: int) -> list[str]:
        window = self._windows.get(length)
        if window is None:
            window = [k for n, keys in self._by_length.items() if _could_match(length, n) for k in keys]
            self._windows[length] = window
        return window

    def match(self, key: str) -> str | None:
        """The key of an indexed name this one duplicates, or None."""
        sorted_key = _sorted_tokens(key)
        if sorted_key in self._keys:
            return self._keys[sorted_key]
        candidates = self._window(len(sorted_key))
        if not candidates:
            return None
        found = process.extractOne(
            sorted_key, candidates, scorer=fuzz.ratio, processor=None, score_cutoff=MATCH_THRESHOLD
        )
        return self._keys[found[0]] if found else None

    def __contains__(self, key: str) -> bool:
        return self.match(key) is not None
