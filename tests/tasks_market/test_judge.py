"""The judge's criteria, each on its own."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta
from decimal import Decimal

import pytest

from tasks_market.services import judging


@pytest.mark.parametrize(("amount", "score"), [("50", 1.0), ("100", 0.5), ("75", 0.75), ("150", 0.0), ("400", 0.0)])
def test_price(amount, score):
    assert judging.price_score(Decimal(amount), Decimal("100"))[0] == pytest.approx(score)


def test_benchmark():
    assert judging.benchmark_score(None)[0] == 0.0
    assert judging.benchmark_score(83.5)[0] == pytest.approx(0.835)


@pytest.mark.parametrize(("eta", "score"), [(10, 1.0), (50, 1.0), (75, 0.5), (100, 0.0), (500, 0.0)])
def test_eta(eta, score):
    now = datetime(2026, 1, 1, tzinfo=UTC)
    assert judging.eta_score(eta, now, now + timedelta(hours=100))[0] == pytest.approx(score)
    assert judging.eta_score(eta, now, now - timedelta(hours=1))[0] == 0.0


def test_relevance_is_token_overlap():
    task = "Write launch copy for the analytics dashboard"  # terms: write launch copy analytics dashboard
    assert judging.terms(task) == {"write", "launch", "copy", "analytics", "dashboard"}
    assert judging.relevance_score("I will write launch copy", task)[0] == pytest.approx(1.0)  # 3 of 5 → 1.2 → 1
    assert judging.relevance_score("Launch!", task)[0] == pytest.approx(0.4)
    assert judging.relevance_score("Unrelated words only", task)[0] == 0.0
