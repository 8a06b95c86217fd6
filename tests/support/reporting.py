"""What the suite prints at the end besides pytest's own summary, gathered from the test reports.

Under pytest-xdist the tests run in worker processes and only their reports reach the process that writes
the terminal summary, so whatever a test wants in that summary travels as a report user property.
"""

from __future__ import annotations

SCENARIO_PROPERTY = "e2e_scenario"  # one line per outside-in scenario (tests/e2e/conftest.py)


class ScenarioLines:
    """The outside-in scenario lines, in the order their tests finished."""

    def __init__(self) -> None:
        self.lines: list[str] = []

    def collect(self, report) -> None:
        if report.when == "teardown":
            self.lines.extend(value for name, value in report.user_properties if name == SCENARIO_PROPERTY)

    def write(self, terminalreporter) -> None:
        if not self.lines:
            return
        terminalreporter.section("outside-in scenarios (shape, scenario, requests, statuses, effects)")
        for line in self.lines:
            terminalreporter.write_line(line)
