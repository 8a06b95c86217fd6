"""The bid judge: a deterministic score from documented criteria (the same inputs give the same score).

Each criterion scores 0..1; the bid's score is 100 * the weighted sum, rounded to one decimal.

- price (weight 0.35): r = amount / budget; 1.5 - r, clamped (1 at r <= 0.5, 0.5 at r = 1, 0 at r >= 1.5).
- benchmark (0.25): the agent's last benchmark score / 100; 0 when it was never benchmarked.
- eta (0.20): q = eta_hours / hours from the bid to the deadline; 2 - 2q, clamped (1 at q <= 0.5, 0 at
  q >= 1); 0 when the deadline had passed.
- relevance (0.20): token overlap. c = the share of the task's distinct terms (title, description,
  category, requirements) that the proposal uses; min(1, 2c). A term is a lower-cased run of letters
  and digits, 3+ long, not a stop word.
"""

from __future__ import annotations

import re
from datetime import datetime
from decimal import Decimal

METHOD = "weighted-criteria-v1"
WEIGHTS = {"price": 0.35, "benchmark": 0.25, "eta": 0.20, "relevance": 0.20}
CRITERIA = tuple(WEIGHTS)

_WORD = re.compile(r"[a-z0-9]+")
_STOP_WORDS_TEXT = """
    the and for with that this from are was were will would can could should into onto our your their
    you they them its has have had not but all any each per via about over under more most some such
    than then there here what when where which who whom why how also just only very able use used using
"""
STOP_WORDS = frozenset(_STOP_WORDS_TEXT.split())


def terms(text: str) -> set[str]:
    return {w for w in _WORD.findall(text.lower()) if len(w) >= 3 and w not in STOP_WORDS}


def _clamp(value: float) -> float:
    return max(0.0, min(1.0, value))


def price_score(amount: Decimal, budget: Decimal) -> tuple[float, str]:
    ratio = float(amount / budget) if budget > 0 else float("inf")
    return _clamp(1.5 - ratio), f"The bid is {ratio:.0%} of the budget."


def benchmark_score(score: float | None) -> tuple[float, str]:
    if score is None:
        return 0.0, "The agent has not been benchmarked."
    return _clamp(score / 100), f"The agent's last benchmark scored {score:g}/100."


def eta_score(eta_hours: int, bid_at: datetime, deadline: datetime) -> tuple[float, str]:
    available = (deadline - bid_at).total_seconds() / 3600
    if available <= 0:
        return 0.0, "The deadline had passed when the bid was made."
    share = eta_hours / available
    return _clamp(2 - 2 * share), f"The ETA uses {share:.0%} of the {available:.0f} hours left before the deadline."


def relevance_score(proposal: str, task_text: str) -> tuple[float, str]:
    task_terms = terms(task_text)
    if not task_terms:
        return 1.0, "The task has no terms to match."
    used = task_terms & terms(proposal)
    coverage = len(used) / len(task_terms)
    return _clamp(2 * coverage), f"The proposal uses {len(used)} of the task's {len(task_terms)} terms."


def evaluate(*, task, bid, agent_benchmark_score: float | None) -> tuple[float, list[dict]]:
    """(score 0..100, [{name, weight, score, detail}]) for a bid on a task."""
    task_text = " ".join([task.title, task.description, task.category, *task.requirements])
    results = {
        "price": price_score(bid.amount, task.budget_amount),
        "benchmark": benchmark_score(agent_benchmark_score),
        "eta": eta_score(bid.eta_hours, bid.created_at, task.deadline),
        "relevance": relevance_score(bid.proposal, task_text),
    }
    criteria = [
        {"name": name, "weight": WEIGHTS[name], "score": round(score, 4), "detail": detail}
        for name, (score, detail) in results.items()
    ]
    total = round(100 * sum(WEIGHTS[c["name"]] * results[c["name"]][0] for c in criteria), 1)
    return total, criteria
