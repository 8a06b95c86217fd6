"""The agent benchmark: a fixed set of tasks sent to the agent's endpoint, signed like a dispatch.

Each case is POSTed as `{"type": "agent.benchmark", "timestamp", "data": {run_id, agent_id, case,
task}}` with Standard Webhooks headers (`webhook-id` = `bench_<run>_<case>`). A case passes when
the endpoint answers 2xx within BENCHMARK_DEADLINE_SECONDS. Latency counts fully up to 500 ms and not at all
from 10 s on (linear between). Score (0..100, one decimal):

    100 * (0.7 * passed / cases + 0.3 * Σ latency credit of passed cases / cases)
"""

from __future__ import annotations

import logging
from uuid import UUID

from django.db import transaction
from django.db.models import Q
from django.utils import timezone

from signed_delivery.sending import message_body, post_signed
from tasks_market.models import Agent, BenchmarkRun, BenchmarkStatus
from tasks_market.services.agents import agent_secrets

logger = logging.getLogger(__name__)

BENCHMARK_DEADLINE_SECONDS = 10.0  # the whole call, connect to last byte
FAST_MS, SLOW_MS = 500, 10_000
SUCCESS_WEIGHT, LATENCY_WEIGHT = 0.7, 0.3

BENCHMARK_CASES: tuple[dict, ...] = (
    {
        "name": "acknowledge",
        "task": {
            "title": "Acknowledge a task",
            "instructions": "Accept this task with any 2xx answer.",
            "input": {"text": "ping"},
        },
    },
    {
        "name": "summarise",
        "task": {
            "title": "Summarise a paragraph",
            "instructions": "Summarise the input in one sentence.",
            "input": {
                "text": "Our spring campaign doubled newsletter sign-ups, but paid social costs rose by a third "
                "while organic reach stayed flat; the team proposes shifting budget to creator partnerships."
            },
        },
    },
    {
        "name": "classify",
        "task": {
            "title": "Classify sentiment",
            "instructions": "Label the input as positive, negative or neutral.",
            "input": {
                "text": "The new onboarding flow is so much faster, thank you!",
                "labels": ["positive", "negative", "neutral"],
            },
        },
    },
)


def latency_credit(latency_ms: int) -> float:
    return max(0.0, min(1.0, (SLOW_MS - latency_ms) / (SLOW_MS - FAST_MS)))


def score(results: list[dict]) -> float:
    total = len(BENCHMARK_CASES)
    passed = [r for r in results if r["passed"]]
    credit = sum(latency_credit(r["latency_ms"] or 0) for r in passed)
    return round(100 * (SUCCESS_WEIGHT * len(passed) / total + LATENCY_WEIGHT * credit / total), 1)


def benchmark_run(*, run_id: UUID | str) -> BenchmarkRun | None:
    """Run a queued benchmark. The run is claimed first, so running this twice runs it once."""
    now = timezone.now()
    if not BenchmarkRun.objects.filter(pk=run_id, status=BenchmarkStatus.QUEUED).update(
        status=BenchmarkStatus.RUNNING, started_at=now
    ):
        return None
    run = BenchmarkRun.objects.select_related("agent").get(pk=run_id)
    agent = run.agent
    results: list[dict] = []
    refused = ""
    for case in BENCHMARK_CASES:
        body = message_body(
            "agent.benchmark",
            {"run_id": str(run.id), "agent_id": str(agent.id), "case": case["name"], "task": case["task"]},
        )
        result = post_signed(
            agent.endpoint_url,
            secrets=agent_secrets(agent),
            msg_id=f"bench_{run.id.hex}_{case['name']}",
            body=body,
            deadline=BENCHMARK_DEADLINE_SECONDS,
        )
        if result.refused:
            refused = result.error
            break
        results.append(
            {
                "case": case["name"],
                "passed": result.ok,
                "status_code": result.status_code,
                "latency_ms": result.duration_ms,
                "error": result.error[:500],
            }
        )
    finished = timezone.now()
    with transaction.atomic():
        if refused:
            BenchmarkRun.objects.filter(pk=run.pk).update(
                status=BenchmarkStatus.FAILED, error=refused[:2000], finished_at=finished, results=results
            )
            return BenchmarkRun.objects.get(pk=run.pk)
        passed = [r for r in results if r["passed"]]
        latencies = [r["latency_ms"] for r in passed if r["latency_ms"] is not None]
        run_score = score(results)
        BenchmarkRun.objects.filter(pk=run.pk).update(
            status=BenchmarkStatus.COMPLETED,
            score=run_score,
            cases_total=len(BENCHMARK_CASES),
            cases_passed=len(passed),
            avg_latency_ms=round(sum(latencies) / len(latencies)) if latencies else None,
            results=results,
            finished_at=finished,
        )
        # The agent keeps the score of its newest completed run, whatever order runs finish in.
        Agent.objects.filter(pk=agent.pk).filter(
            Q(benchmarked_at__isnull=True) | Q(benchmarked_at__lt=run.created_at)
        ).update(benchmark_score=run_score, benchmarked_at=run.created_at)
    logger.info("benchmark %s of agent %s scored %s", run.id, agent.id, run_score)
    return BenchmarkRun.objects.get(pk=run.pk)
