"""Celery jobs of the local demo (docs/guide.md#the-local-demo): thin, taking ids, safe to run twice."""

from __future__ import annotations

from celery import shared_task

from demo.services import demo_agent_bid, demo_agent_deliver


@shared_task(name="demo.tasks.agent_bid", ignore_result=True)
def agent_bid(task_id: str | None = None) -> None:
    """The demo agent bids on one new task (its saved search's `task.matched`) or on every open one (beat)."""
    demo_agent_bid(task_id=task_id)


@shared_task(name="demo.tasks.agent_deliver", ignore_result=True)
def agent_deliver(task_id: str) -> None:
    demo_agent_deliver(task_id=task_id)
