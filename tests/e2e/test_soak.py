"""A short soak of `make run` (scripts/soak.py runs the long one on demand): steady mixed load for 25 s
with a torn broker message injected; the worker is restarted, no job is lost, the web keeps serving. The
beat's routine sends (every 10 s) stay out of the INFO log, the jobs the load queued do not.

On the package's `make run` server (tests/e2e/conftest.py), which the other `run` tests use before and after:
a server that has already served them is what a soak should find, and a start of its own cost the suite
half a minute of CPU."""

from __future__ import annotations

import importlib.util
import sys

import pytest

from tools.nodes import ROOT

_spec = importlib.util.spec_from_file_location("e2e_soak", ROOT / "scripts" / "soak.py")
soak_script = importlib.util.module_from_spec(_spec)
sys.modules["e2e_soak"] = soak_script  # its dataclasses look their module up
_spec.loader.exec_module(soak_script)


@pytest.mark.parametrize("server", ["run"], indirect=True)
def test_a_short_soak_with_a_torn_broker_message_loses_no_job(server):
    report = soak_script.soak(server, seconds=25, tear_every=60, first_tear=10, pause=1.0)
    print(report.line())

    assert report.torn_messages == 1
    assert report.worker_restarts >= 1, server.log_errors()  # the torn message stopped it; supervise.py restarted it
    assert report.jobs_enqueued > 0
    assert report.jobs_lost == 0, report.line()
    assert report.server_errors == 0, report.line()
    assert report.health_failures == 0, report.line()
    # Routine periodic work is logged at DEBUG in the local profile (core/ops/routine_logs.py); other tasks at INFO.
    log = server.log_text()
    assert "Sending due task" not in log and "Task scrapers.tasks.poll_snapshots" not in log
    assert "Task tasks_market.tasks.judge_bid[" in log
