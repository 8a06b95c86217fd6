"""The schema's URL pattern as the fuzzer sees it (tests/support/schemathesis_hooks.py says why).

Plain Python, without schemathesis or Django: the hooks run in schemathesis's process, and a test checks
the rewrite against core.api.fields.URL_PATTERN (tests/test_fuzz.py).
"""

from __future__ import annotations

_HOST_LOOKAHEAD = "(?=[^/:]{1,253}(?:[:/]|$))"
_ANY_LABELS = ")+[A-Za-z]{2,63}"


def url_pattern_for_fuzzing(pattern: str) -> str:
    """URL_PATTERN without its lookahead, its host at most two labels and a top-level domain (a subset)."""
    if _HOST_LOOKAHEAD not in pattern or _ANY_LABELS not in pattern:
        return pattern
    return pattern.replace(_HOST_LOOKAHEAD, "").replace(_ANY_LABELS, "){1,2}[A-Za-z]{2,63}")
