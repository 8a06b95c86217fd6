"""schemathesis over every operation of the live schema, through the real TLS server.

Fails on any 5xx and on any response (status, content type, headers, body) that the schema does
not describe. Each later endpoint is covered automatically, because the run reads /openapi.json: the
run is split into parts by path so that pytest-xdist spreads them over its workers, and the last part
takes every path the others do not name (a new path lands there).

Every phase runs here (examples, coverage, fuzzing), bounded by an example count, never by wall time.
The run against `make run` (tests/e2e/test_schemathesis.py) leaves the deterministic coverage phase to
this one, which sends the same cases.
"""

from __future__ import annotations

import re

import pytest

from core.api.fields import URL_PATTERN
from core.models import RateLimitOverride
from tests.conftest import jwt_for
from tests.support.factories import UserFactory
from tests.support.schemathesis_patterns import url_pattern_for_fuzzing
from tests.support.servers import run_schemathesis

EXAMPLES = 2  # generated cases per operation in the fuzzing phase (the live run fuzzes 3 and adds the stateful phase)
# Parts by resource (the two largest in two, the small ones together), so that the workers share the run and
# each part's fixed cost (a schemathesis process reading the whole schema, a TLS server) is paid eight times,
# not twelve; "rest" is every path the others leave out.
PARTS = {
    "agents": r"^/api/v1/agents(/|$)",
    "auth-chat-assistant": r"^/api/v1/(auth|allmodelchat|assistant)(/|$)",
    "teams-kits-webhooks": r"^/api/v1/(teams|brand-kits|webhooks)(/|$)",
} | {
    "tasks": r"^/api/v1/tasks(?!/[^/]+/delivery)(/|$)",
    "task-delivery": r"^/api/v1/tasks/[^/]+/delivery",
    "brands": r"^/api/v1/brands(?!/[^/]+/brand-intelligence)(/|$)",
    "brand-intelligence": r"^/api/v1/brands/[^/]+/brand-intelligence",
}


def _selection(part: str) -> tuple[str, str]:
    if part == "rest":
        return "--exclude-path-regex", "|".join(f"({regex})" for regex in PARTS.values())
    return "--include-path-regex", PARTS[part]


@pytest.mark.fuzz
@pytest.mark.timeout(1200)  # a safety net: the run is bounded by its example count
@pytest.mark.django_db(transaction=True)
@pytest.mark.parametrize("part", [*PARTS, "rest"])
def test_schemathesis_finds_no_server_errors_or_schema_mismatches(part, tls_server, tmp_path):
    # The fuzzer is one client sending thousands of requests: lift its caps, as staff would.
    RateLimitOverride.objects.create(network="127.0.0.1", rule="*", limit=10_000_000, reason="fuzzing")
    user = UserFactory(email="fuzzer@example.com", credits=1_000)

    result = run_schemathesis(
        tls_server, jwt_for(user), tmp_path / "report", *_selection(part), max_examples=EXAMPLES, timeout=1100
    )

    print(result.stdout[-3000:])
    assert result.returncode == 0, result.stdout[-20000:] + result.stderr[-5000:]


def test_the_fuzzers_url_pattern_is_the_servers_without_the_lookahead_and_narrower():
    """tests/support/schemathesis_hooks.py: the schema's URL pattern, rewritten for speed, still fits it."""
    fuzzing = re.compile(url_pattern_for_fuzzing(URL_PATTERN))
    served = re.compile(URL_PATTERN)

    assert "(?=" not in fuzzing.pattern  # the rewrite still applies to the served pattern
    for url in ("https://a.example.com/x?y=1", "http://example.co:8080", "https://" + "a" * 63 + ".b.io/"):
        assert fuzzing.match(url) and served.match(url), url
    for url in ("https://a.b.c.example.com/", "ftp://example.com", "https://" + "a." * 130 + "io"):
        assert not fuzzing.match(url), url


def test_the_fuzzer_writes_numbers_no_double_holds():
    """tests/support/schemathesis_hooks.py: one body in five that carries numbers has one of them written as a
    literal hypothesis never produces (1e400, 5e-324, ...); the rest of the body is what was generated."""
    import json

    from tests.support.schemathesis_hooks import HUGE_EVERY, HUGE_NUMBERS, with_huge_number

    bodies = [{"amount": n, "nested": [{"rate": n / 7}], "name": f"x{n}", "flag": True} for n in range(1000)]
    mutated = {index: with_huge_number(body) for index, body in enumerate(bodies)}
    mutated = {index: text for index, text in mutated.items() if text is not None}

    assert 0.5 / HUGE_EVERY < len(mutated) / len(bodies) < 1.5 / HUGE_EVERY
    literals = set()
    for index, text in mutated.items():
        decoded = json.loads(text, parse_float=str, parse_int=str)  # still JSON, numbers kept as written
        original = bodies[index]
        assert decoded["name"] == original["name"] and decoded["flag"] is True
        changed = [v for v in (decoded["amount"], decoded["nested"][0]["rate"]) if v in HUGE_NUMBERS]
        assert len(changed) == 1, text
        literals.add(changed[0])
    assert literals == set(HUGE_NUMBERS)
    assert with_huge_number({"name": "no numbers", "flag": False}) is None
    assert with_huge_number(bodies[0]) == with_huge_number(dict(bodies[0]))  # repeatable
