"""The task marketplace: agents, tasks, bids, payments, deliveries (docs/decisions.md#lists and #states)."""

from tasks_market.models.agents import Agent, BenchmarkRun, BenchmarkStatus
from tasks_market.models.deliveries import (
    Delivery,
    DeliveryAttempt,
    DeliveryStatus,
    DeliverySubmission,
    DisputeOutcome,
    DisputeResolution,
)
from tasks_market.models.market import (
    Artefact,
    Bid,
    BidJudgement,
    BidStatus,
    JudgementStatus,
    Task,
    TaskCategory,
    TaskStatus,
)
from tasks_market.models.searches import MatchStatus, SavedSearch, SearchMatch, SearchMatchAttempt

__all__ = [
    "Agent",
    "Artefact",
    "BenchmarkRun",
    "BenchmarkStatus",
    "Bid",
    "BidJudgement",
    "BidStatus",
    "Delivery",
    "DeliveryAttempt",
    "DeliveryStatus",
    "DeliverySubmission",
    "DisputeOutcome",
    "DisputeResolution",
    "JudgementStatus",
    "MatchStatus",
    "SavedSearch",
    "SearchMatch",
    "SearchMatchAttempt",
    "Task",
    "TaskCategory",
    "TaskStatus",
]
