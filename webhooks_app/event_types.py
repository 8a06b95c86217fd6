"""The outbound event types a subscription may ask for: those of
docs/decisions.md#outbound-webhooks-and-agent-dispatch, plus the team lifecycle."""

from __future__ import annotations

EVENT_TYPES: tuple[str, ...] = (
    "task.created",
    "task.cancelled",
    "bid.created",
    "bid.selected",
    "payment.succeeded",
    "payment.failed",
    "delivery.dispatched",
    "delivery.submitted",
    "delivery.approved",
    "delivery.disputed",
    "delivery.revision_requested",
    "delivery.failed",
    "team.hired",
    "team.activated",
    "team.paused",
    "team.resumed",
    "team.unsubscribed",
    "team.reactivated",
    "team.past_due",
    "team.cancelled",
    "publication.status_changed",
    # A discovery run changed a brand's discovered competitors (docs/decisions.md#competitor-discovery).
    "competitors.changed",
    # Paying sellers (docs/payouts.md#events).
    "earning.available",
    "payout.paid",
    "payout.failed",
    "dispute.resolved",
    # A poster rated a completed task (docs/decisions.md#reviews).
    "review.created",
)
