"""The money races on the embedded default (`make run`'s SQLite), in a process of its own, as
tests/core/test_embedded_sqlite_queues_writers.py runs SQLite writers (tests/payments/payouts/sqlite_races.py)."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

from tools.nodes import testenv

ROOT = Path(__file__).resolve().parents[3]


def test_each_race_applies_once_on_sqlite(tmp_path):
    env = {k: v for k, v in os.environ.items() if k not in ("DATABASE_URL", "REDIS_URL", "CELERY_BROKER_URL")}
    env.update(DJANGO_SETTINGS_MODULE="config.settings.local", VAR_DIR=str(tmp_path / "var"))
    testenv.migrated_sqlite(env)  # the run's migrated database, copied (its `migrate` then has nothing to do)
    done = subprocess.run(
        [sys.executable, "-m", "tests.payments.payouts.sqlite_races"],
        cwd=ROOT,
        env=env,
        capture_output=True,
        text=True,
        timeout=300,
        check=False,
    )
    assert done.returncode == 0, done.stderr[-3000:]
    result = json.loads(done.stdout.strip().splitlines()[-1])

    assert result["approve_vs_window_earnings"] == 1, result
    assert result["two_staff"] == ["ok", "ok"], result
    assert (result["two_staff_resolutions"], result["two_staff_refunded_minor"]) == (1, 5000), result
    assert result["refund_vs_payout"] == ["ok", "ok"], result
    assert result["refund_vs_payout_refunds"] == 1, result
    assert result["refund_vs_payout_paid"] == "225.00", result  # 135.00 + 90.00, each once
    # Exactly one of staff's refund and the release resolution applies.
    assert result["refund_vs_release_resolutions"] == 1, result
    refunded, earnings = result["refund_vs_release_refunded_minor"], result["refund_vs_release_earnings"]
    assert (refunded, earnings) in ((15000, 0), (0, 1)), result
    assert sorted(result["refund_vs_release"]) == ["InvalidState", "ok"], result
    # The poster's cancel and the seller's withdrawal: one wins, the payment is refunded once.
    assert result["cancel_vs_withdraw"] == ["InvalidState", "ok"], result
    assert (result["cancel_vs_withdraw_refunded_minor"], result["cancel_vs_withdraw_refunds"]) == (15000, 1), result
    # A chargeback racing a payout's claim: the claim waits, sees the earning frozen and pays nothing.
    assert result["chargeback_vs_claim"] == "NoneType", result
    assert (result["chargeback_vs_claim_payouts"], result["chargeback_vs_claim_earning"]) == (0, "frozen"), result
    assert result["ledger_problems"] == [], result
