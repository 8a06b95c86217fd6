"""schemathesis against the live `make run` server, every operation of its /openapi.json.

The fuzzer is one client sending thousands of requests, so the harness lifts the rate limit for
127.0.0.1 with an override, as staff would. It runs as an ordinary user with credits over every
operation but the staff-only scraper endpoints, then as staff over those. Fails on any 5xx, any
status the schema does not declare, and any response that does not match its schema.

The deterministic coverage phase (boundary and negative values, unexpected methods: most of the cases)
runs in process over the same schema (tests/test_fuzz.py); here the explicit examples and the generated
cases go through the real server, its processes and its proxy headers. Then, as the user, the stateful
phase follows the schema's links (config/schema_links.py) from what each create made to the operations
that take it, real ids instead of made-up ones: a task to its bids, one of the demo agent's bids to select
(the demo agent bids on every new task, as in the guide's marketplace walk-through). Its scenario count is
set in tests/support/schemathesis.toml (under a minute).
"""

from __future__ import annotations

import re

import pytest

from tests.e2e.harness import Api, Scenario, create_user, login
from tests.support.servers import run_schemathesis

STAFF_ONLY = "^/api/v1/admin/"
EXAMPLES = 2  # generated cases per operation and phase (tests/test_fuzz.py adds the coverage phase in-process)
PHASES = "examples,fuzzing,stateful"
# The staff operations have one link (a snapshot to its progress), which fuzzing already reaches with the
# snapshots it made: a stateful phase there added a minute for nothing more.
STAFF_PHASES = "examples,fuzzing"


def cases(stdout: str) -> int:
    """How many test cases the run generated (its summary says `N generated`)."""
    found = re.findall(r"(\d+) generated", stdout)
    return int(found[-1]) if found else 0


def warnings(stdout: str) -> str:
    """The run's WARNINGS block (operations it could not reach with valid data, and why), which the
    stateful phase's notes can push out of the output's tail."""
    found = re.search(r"^=+ WARNINGS =+$.*?(?=^=+ )", stdout, re.MULTILINE | re.DOTALL)
    return found[0] if found else ""


@pytest.mark.timeout(1300)  # safety nets: both runs are bounded by their example counts
@pytest.mark.parametrize("server", ["run"], indirect=True)
def test_schemathesis_against_make_run(server, scenario: Scenario, tmp_path):
    anonymous = Api(server, scenario)
    user_token = login(anonymous, create_user(server, credits=100_000))
    staff = create_user(server, staff=True, permissions=("scrapers.add_snapshot", "scrapers.view_snapshot"))
    staff_token = login(anonymous, staff)

    as_user = run_schemathesis(
        server.base_url,
        user_token,
        tmp_path / "user",
        "--exclude-path-regex",
        STAFF_ONLY,
        max_examples=EXAMPLES,
        phases=PHASES,
        timeout=900,
    )
    as_staff = run_schemathesis(
        server.base_url,
        staff_token,
        tmp_path / "staff",
        "--include-path-regex",
        STAFF_ONLY,
        max_examples=EXAMPLES,
        phases=STAFF_PHASES,
        timeout=300,
    )

    scenario.effects.update(user_cases=cases(as_user.stdout), staff_cases=cases(as_staff.stdout))
    print(warnings(as_user.stdout), as_user.stdout[-3000:], warnings(as_staff.stdout), as_staff.stdout[-3000:])
    assert as_user.returncode == 0, as_user.stdout[-20000:] + as_user.stderr[-3000:]
    assert as_staff.returncode == 0, as_staff.stdout[-20000:] + as_staff.stderr[-3000:]
