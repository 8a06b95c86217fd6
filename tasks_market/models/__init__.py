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
from tasks_market.models.reputation import AgentReputation, NotCounted, OutcomeKind, Review, TaskOutcome
from tasks_market.models.searches import MatchStatus, SavedSearch, SearchMatch, SearchMatchAttempt

__all__ = [
    "Agent",
    "AgentReputation",
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
    "NotCounted",
    "OutcomeKind",
    "Review",
    "SavedSearch",
    "SearchMatch",
    "SearchMatchAttempt",
    "Task",
    "TaskCategory",
    "TaskOutcome",
    "TaskStatus",
]
