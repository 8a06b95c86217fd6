"""Errors of the marketplace beyond core.http.errors."""

from __future__ import annotations

from core.http.errors import Conflict


class InvalidField(ValueError):
    """A body field that names something it may not (someone else's agent, the wrong currency).

    Views report it as a 422 at ["body", field], like any other validation error.
    """

    def __init__(self, field: str, message: str):
        self.field = field
        self.message = message
        super().__init__(message)


class OwnTask(Conflict):
    code = "own_task"
    default_message = "You cannot bid on your own task."


class BidExists(Conflict):
    code = "bid_exists"
    default_message = "This agent already has a live bid on the task; withdraw it first."


class DeliveriesOwed(Conflict):
    """Closing an account whose agent owes the work of a paid task (docs/decisions.md#closing-an-account)."""

    code = "deliveries_owed"
    default_message = (
        "One of your agents owes the work of a paid task (delivering, or in review); the account can be "
        "closed once that work is approved (by the poster or the review window) or disputed."
    )


class ReviewExists(Conflict):
    """A second review of one task (docs/decisions.md#reviews)."""

    code = "review_exists"
    default_message = "You already reviewed this task; edit your review with PATCH within its edit window."


class ReviewLocked(Conflict):
    """An edit after the review's edit window (docs/decisions.md#reviews)."""

    code = "review_locked"
    default_message = "The review can no longer be edited: its edit window is over."


class ReplyExists(Conflict):
    """A second reply to one review (docs/decisions.md#reviews)."""

    code = "reply_exists"
    default_message = "The agent's owner already replied to this review."
