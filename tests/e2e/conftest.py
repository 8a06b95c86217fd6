"""Outside-in: the real `make run` and `make serve` servers, driven over HTTPS by concurrent clients.

Every test in this directory is marked `e2e` (deselect locally with `-m "not e2e"`). The `server`
fixture is parametrised over the two shapes, `run` first; each shape is started once (for this package:
the last one stops as soon as the package's tests are done, not at the end of the whole run) and stopped
(its whole process group) before the next one starts. When a test fails, the tail of the
server's combined output is attached to the report.
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.e2e.harness import SCENARIOS, Scenario, Server, start_shape
from tests.support.reporting import SCENARIO_PROPERTY

HERE = Path(__file__).resolve().parent
SHAPES = ["run", "serve"]


def pytest_itemcollected(item):
    """Marks each test as it is collected (before any pytest_collection_modifyitems orders them)."""
    if HERE in Path(str(item.path)).resolve().parents:
        item.add_marker(pytest.mark.e2e)
        # Under `--dist loadgroup` (make test) the tests on one shape's server all go to one worker
        # (tests/conftest.py's scheduler groups them by their `[run]` / `[serve]` id).


@pytest.fixture(scope="package", params=SHAPES)
def server(request) -> Server:
    with start_shape(request.param) as started:
        yield started


@pytest.fixture
def scenario(request, server) -> Iterator[Scenario]:
    """What the test sent and saw, printed in the run's summary (one line per scenario and shape)."""
    name = request.node.originalname.removeprefix("test_")
    recorded = Scenario(server.shape, name)
    SCENARIOS.append(recorded)
    yield recorded
    # Its kept-alive connections closed now: left to the collector, 56 of them held `make run`'s server threads
    # (one a connection) for its 5 s keep-alive, and the next test's first requests got 503 server_busy.
    for client in recorded.clients:
        client.close()
    # Reported with the test (tests/conftest.py prints the lines at the end): under pytest-xdist the test
    # runs in a worker, and only its reports reach the process that writes the summary.
    request.node.user_properties.append((SCENARIO_PROPERTY, recorded.line()))


@pytest.hookimpl(hookwrapper=True)
def pytest_runtest_makereport(item, call):
    outcome = yield
    report = outcome.get_result()
    started = getattr(item, "funcargs", {}).get("server")
    if report.failed and isinstance(started, Server):
        report.sections.append((f"server errors ({started.shape}: {started.log_path})", started.log_errors()))
        report.sections.append((f"server log tail ({started.shape}: {started.log_path})", started.log_tail(120)))
