"""Name normalisation and the fuzzy duplicate rule (docs/decisions.md#domain-rules)."""

from __future__ import annotations

import pytest
from rapidfuzz import fuzz

from brands.domain.matching import NameIndex, normalize_domain, normalize_name


@pytest.mark.parametrize(
    ("raw", "normalized"),
    [
        ("Acme, Inc.", "acme"),
        ("ACME LLC", "acme"),
        ("Acme Ltd", "acme"),
        ("Acme GmbH", "acme"),
        ("Acme Corp.", "acme"),
        ("Acme & Co", "acme"),
        ("The Acme Company", "acme"),
        ("acme.com", "acme"),
        ("acme.co.uk", "acme"),
        ("Nestlé S.A.", "nestle"),
        ("McDonald\u2019s", "mcdonalds"),
        ("J.Crew", "j crew"),
        ("I.B.M.", "ibm"),
        ("Co", "co"),  # a name that is only a suffix keeps it
        ("The", "the"),
        ("  Über   Eats  ", "uber eats"),
    ],
)
def test_normalize_name(raw, normalized):
    assert normalize_name(raw) == normalized


@pytest.mark.parametrize(
    ("raw", "domain"),
    [
        ("https://www.Acme.com/shop?x=1", "acme.com"),
        ("WWW.acme.com", "acme.com"),
        ("shop.acme.co.uk.", "shop.acme.co.uk"),
        ("not a domain", ""),
        ("localhost", ""),
        ("", ""),
    ],
)
def test_normalize_domain(raw, domain):
    assert normalize_domain(raw) == domain


def test_the_index_matches_exactly_and_fuzzily_at_90():
    index = NameIndex(["globex", "wayne enterprises", "acme shoes"])

    assert index.match("globex") == "globex"
    assert index.match("shoes acme") == "acme shoes"  # token order does not matter
    assert index.match("wayne enterprices") == "wayne enterprises"  # 94
    assert index.match("globox") is None  # 83
    assert "initech" not in index


def test_a_ratio_of_exactly_90_is_a_duplicate_and_below_is_not():
    index = NameIndex(["klmno pqrs", "klmn tuvw"])

    assert fuzz.token_sort_ratio("klmno pqrs", "klmno pqrt") == 90  # Indel distance 2 over 20 characters
    assert index.match("klmno pqrt") == "klmno pqrs"
    assert fuzz.token_sort_ratio("klmn tuvw", "klmn tuvx") < 90  # distance 2 over 18
    assert index.match("klmn tuvx") is None


def test_the_index_agrees_with_a_brute_force_scan():
    import random
    import string

    rnd = random.Random(7)
    words = ["".join(rnd.choice(string.ascii_lowercase) for _ in range(rnd.randint(3, 9))) for _ in range(400)]
    keys = [" ".join(rnd.sample(words, rnd.randint(1, 3))) for _ in range(300)]
    queries = [" ".join(rnd.sample(words, rnd.randint(1, 3))) for _ in range(200)] + [k[:-1] for k in keys[:100]]
    index = NameIndex(keys)

    for query in queries:
        expected = any(fuzz.token_sort_ratio(query, key) >= 90 for key in keys)
        assert (index.match(query) is not None) == expected, query
