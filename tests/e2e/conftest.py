"""Outside-in: the real `make run` and `make serve` servers, driven over HTTPS by concurrent clients.

Every test in this directory is marked `e2e` (deselect locally with `-m "not e2e"`). The `server`
fixture is parametrised over the two shapes, `run` first; each shape is started once per session and
stopped (its whole process group) before the next one starts. When a test fails, the tail of the
server's combined output is attached to the report.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.e2e.harness import SCENARIOS, Scenario, Server, start_shape

HERE = Path(__file__).resolve().parent
SHAPES = ["run", "serve"]


def pytest_collection_modifyitems(config, items):
    for item in items:
        if HERE in Path(str(item.path)).resolve().parents:
            item.add_marker(pytest.mark.e2e)


@pytest.fixture(scope="session", params=SHAPES)
def server(request) -> Server:
    with start_shape(request.param) as started:
        yield started


@pytest.fixture
def scenario(request, server) -> Scenario:
    """What the test sent and saw, printed in the run's summary (one line per scenario and shape)."""
    name = request.node.originalname.removeprefix("test_")
    recorded = Scenario(server.shape, name)
    SCENARIOS.append(recorded)
    return recorded


@pytest.hookimpl(hookwrapper=True)
def pytest_runtest_makereport(item, call):
    outcome = yield
    report = outcome.get_result()
    started = getattr(item, "funcargs", {}).get("server")
    if report.failed and isinstance(started, Server):
        report.sections.append((f"server errors ({started.shape}: {started.log_path})", started.log_errors()))
        report.sections.append((f"server log tail ({started.shape}: {started.log_path})", started.log_tail(120)))


def pytest_terminal_summary(terminalreporter):
    if not SCENARIOS:
        return
    terminalreporter.section("outside-in scenarios (shape, scenario, requests, statuses, effects)")
    for recorded in SCENARIOS:
        terminalreporter.write_line(recorded.line())
