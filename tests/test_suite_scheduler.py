"""The suite's own pytest-xdist scheduler (tests/conftest.py) keeps working on the pinned pytest-xdist."""

from __future__ import annotations

import inspect

from xdist.scheduler.loadscope import LoadScopeScheduling

from tests.conftest import _ServerShapeScheduling


def test_the_suites_scheduler_still_hooks_into_pytest_xdist():
    """tests/conftest.py's scheduler overrides pytest-xdist's private `_split_scope` (pinned in
    requirements-dev.txt): an upgrade that stops calling it would silently spread the tests on one `make run` /
    `make serve` server over several workers, each starting its own. This fails first."""
    assert "self._split_scope(" in inspect.getsource(LoadScopeScheduling)
    split = _ServerShapeScheduling._split_scope.__get__(object.__new__(_ServerShapeScheduling))
    assert split("tests/e2e/test_faults.py::test_x[serve]") == split("tests/e2e/test_trust.py::test_y[serve]")
    assert split("tests/e2e/test_schemathesis.py::test_z[run]") != split("tests/e2e/test_journey.py::test_w[run]")
