"""Agents: registration, their endpoint and signing secret, benchmarks."""

from __future__ import annotations

import logging
from datetime import timedelta
from uuid import UUID

from django.db import IntegrityError, transaction
from django.db.models import Q
from django.utils import timezone

from core.http.errors import Conflict, NotFound
from core.ops.enqueue import enqueue_after_commit
from signed_delivery.signing import ROTATION_GRACE, new_secret, signing_secrets
from tasks_market.models import Agent, BenchmarkRun, BenchmarkStatus

logger = logging.getLogger(__name__)

# A run still queued or running after this is taken to be lost (its worker died) when a new one is asked for.
BENCHMARK_STALE_AFTER = timedelta(minutes=10)


class BenchmarkRunning(Conflict):
    code = "benchmark_running"
    default_message = "A benchmark of this agent is already queued or running."


def _owned(owner, agent_id: UUID, *, lock: bool = False) -> Agent:
    rows = Agent.objects.select_for_update() if lock else Agent.objects
    agent = rows.filter(owner=owner, id=agent_id).first()
    if agent is None:
        raise NotFound()
    return agent


@transaction.atomic
def agent_register(
    *, owner, name: str, endpoint_url: str, description: str = "", capabilities: list[str] | None = None
) -> Agent:
    """A new agent with a fresh signing secret, which the caller shows to the owner once."""
    return Agent.objects.create(
        owner=owner,
        name=name,
        description=description,
        endpoint_url=endpoint_url,
        capabilities=list(dict.fromkeys(capabilities or [])),
        signing_secret=new_secret(),
    )


def agent_secrets(agent: Agent, *, now=None) -> list[str]:
    """The secrets that sign for an agent now: the current one, plus the previous one during its grace."""
    return signing_secrets(
        secret=agent.signing_secret,
        previous_secret=agent.previous_secret,
        previous_expires_at=agent.previous_secret_expires_at,
        now=now or timezone.now(),
    )


@transaction.atomic
def agent_update_endpoint(*, owner, agent_id: UUID, endpoint_url: str) -> Agent:
    agent = _owned(owner, agent_id, lock=True)
    agent.endpoint_url = endpoint_url
    agent.save(update_fields=["endpoint_url", "updated_at"])
    return agent


@transaction.atomic
def agent_rotate_secret(*, owner, agent_id: UUID, now=None) -> Agent:
    """A new secret (shown once). The current one keeps signing beside it for ROTATION_GRACE;
    rotating again within the grace drops the oldest, so at most two secrets ever sign."""
    now = now or timezone.now()
    agent = _owned(owner, agent_id, lock=True)
    agent.previous_secret = agent.signing_secret
    agent.previous_secret_expires_at = now + ROTATION_GRACE
    agent.signing_secret = new_secret()
    agent.secret_rotated_at = now
    agent.save(
        update_fields=[
            "signing_secret",
            "previous_secret",
            "previous_secret_expires_at",
            "secret_rotated_at",
            "updated_at",
        ]
    )
    return agent


def benchmark_start(*, owner, agent_id: UUID, now=None) -> BenchmarkRun:
    """Queue a benchmark run (one at a time per agent); a Celery job runs it after commit."""
    now = now or timezone.now()
    try:
        with transaction.atomic():
            agent = _owned(owner, agent_id, lock=True)
            BenchmarkRun.objects.filter(
                agent=agent, status__in=[BenchmarkStatus.QUEUED, BenchmarkStatus.RUNNING]
            ).filter(Q(created_at__lt=now - BENCHMARK_STALE_AFTER)).update(
                status=BenchmarkStatus.FAILED, error="Interrupted: the run did not finish in time.", finished_at=now
            )
            if BenchmarkRun.objects.filter(
                agent=agent, status__in=[BenchmarkStatus.QUEUED, BenchmarkStatus.RUNNING]
            ).exists():
                raise BenchmarkRunning()
            run = BenchmarkRun.objects.create(agent=agent)
            enqueue_after_commit("tasks_market.tasks.run_benchmark", str(run.id))
    except IntegrityError as exc:
        raise BenchmarkRunning() from exc
    return run
