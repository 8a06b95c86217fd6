"""What closing an account winds down in the apps that own its flows.

A closed account can never act again, but what it started would keep running without it: its pending
bids could be selected and paid for, its open tasks keep taking bids, its webhook subscriptions keep
receiving events, its team subscriptions keep renewing. `accounts` imports no domain app, so each app
that owns such a flow registers a step from its AppConfig.ready() (as accounts.review does for what an
account sends data to):

    account_closing_step_register("webhook_subscriptions", webhook_subscriptions_wind_down)

`accounts.services.user_delete` calls every step, in registration order, with `user=` inside the one
transaction that closes the account. So a step:

- makes no network call: what a provider must hear is queued with `core.ops.enqueue.enqueue_after_commit`
  (sent only if the close commits) under an idempotency key derived from the operation;
- may refuse the close by raising a `core.http.errors.DomainError`: the whole close rolls back;
- deletes nothing: the other party keeps its history.

See docs/decisions.md#closing-an-account.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

ClosingStep = Callable[..., Any]

_steps: dict[str, ClosingStep] = {}


def account_closing_step_register(name: str, step: ClosingStep) -> ClosingStep:
    """Add (or replace) the step called `name`; it is called as `step(user=...)`."""
    _steps[name] = step
    return step


def account_closing_steps_run(*, user) -> None:
    """Every registered step for `user`, in registration order, inside the caller's transaction."""
    for step in _steps.values():
        step(user=user)
