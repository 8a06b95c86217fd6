"""Faults in the production shape (`make serve`: gunicorn, a Celery worker, beat, PostgreSQL, Redis).

Each test breaks one part of a PostgreSQL, Redis and `make serve` stack (tests/e2e/faults_support.py) under
load from outside, over HTTPS, and says what was lost: nothing. The Redis and PostgreSQL outages share one stack
(each ends with the stack whole again, which the next one relies on: the suite's scheduler keeps this module on
one worker, tests/conftest.py); the killed worker gets a stack of its own, without the fast sweep that would
queue its held job a second time.
"""

from __future__ import annotations

import os
import signal
import time

import psycopg
import pytest

from tests.e2e.faults_support import Load, bid_body, by_op, market, production_stack, statuses, task_body, wait_until

pytestmark = [pytest.mark.e2e, pytest.mark.timeout(240)]

# Seconds each load thread waits between its rounds: traffic never stops across a fault (two writers and two
# readers, dozens of requests a second), and the suite's two cores are not spent on volume the faults do not need.
LOAD_PAUSE = 0.1


def report(title: str, **lines) -> None:
    print(f"\n[faults] {title}")
    for name, value in lines.items():
        print(f"[faults]   {name.replace('_', ' ')}: {value}")


def described(answers, down_at: float, up_at: float) -> list[str]:
    """One line per answer, its start relative to Redis stopping and coming back (for a failure's message)."""
    return [
        f"{a.op} {a.status} started {a.at - down_at:+.2f} s from the stop, {a.at - up_at:+.2f} s from the restart, "
        f"took {a.seconds:.2f} s{f': {a.error}' if a.error else ''}"
        for a in answers
    ]


def pending_judgements(stack, bid_ids: list[str]) -> int:
    rows = stack.sql(
        "SELECT count(*) FROM tasks_market_bidjudgement WHERE bid_id = ANY(%s::uuid[]) AND status = 'pending'",
        bid_ids,
    )
    return rows[0][0]


@pytest.fixture(scope="module")
def stack(tmp_path_factory):
    """The outages' stack: the beat's sweep every 10 s, judging what is pending for over 10 s."""
    with production_stack(
        tmp_path_factory.mktemp("faults"),
        celery_concurrency=1,
        DELIVERIES_SWEEP_SECONDS="10",
        JUDGEMENT_CATCH_UP_AFTER_SECONDS="10",
    ) as started:
        yield started


def test_redis_stopped_for_20_s_under_load(stack):
    """The API keeps answering without Redis; /health says 503 meanwhile; queued work is done afterwards.

    Without Redis the rate limiter has no counters and fails open (served, no X-RateLimit headers); a bid's
    judge job that could not be queued on commit is judged by the beat's sweep (tasks_market.sweep_deliveries,
    run every 10 s here, judging what is pending for over 10 s).
    """
    load = Load(stack, market(stack), pause=LOAD_PAUSE).start()
    try:
        time.sleep(4)
        down_at = time.monotonic()
        stack.redis.stop()
        stopped_at = time.monotonic()  # the server has exited
        health_down = []
        while time.monotonic() - down_at < 20:
            health_down.append(stack.health())
            time.sleep(2)
        restart_at = time.monotonic()
        stack.redis.start()
        up_at = time.monotonic()
        wait_until(lambda: stack.health() == 200, "/health to say 200 with Redis back", timeout=30)
        health_back = time.monotonic() - up_at
        time.sleep(4)
    finally:
        load.stop()
    before, during, after = (
        load.between(0, down_at),
        load.between(down_at, up_at),
        load.between(up_at, float("inf")),
    )
    in_flight = [a for a in before if a.at + a.seconds >= down_at]
    bids_during = len([a for a in during if a.op == "create bid" and a.status == 201])
    judged_in = wait_until(
        lambda: pending_judgements(stack, load.bids) == 0 and time.monotonic() - up_at,
        "every acknowledged bid to be judged",
        timeout=60,
        interval=1,
    )
    stored_tasks = stack.sql("SELECT count(*) FROM tasks_market_task WHERE id = ANY(%s::uuid[])", load.tasks)[0][0]
    stored_bids = stack.sql("SELECT count(*) FROM tasks_market_bid WHERE id = ANY(%s::uuid[])", load.bids)[0][0]
    lost = (len(load.tasks) - stored_tasks) + (len(load.bids) - stored_bids)
    report(
        "Redis stopped for 20 s under load",
        requests=len(load.answers),
        statuses_before=statuses(before),
        in_flight_at_the_stop=f"{len(in_flight)} answers, {sum(not a.rate_limited_headers for a in in_flight)} "
        "of them uncounted",
        statuses_during_outage=by_op(during),
        statuses_after=statuses(after),
        slowest_answer_during_outage=f"{max(a.seconds for a in during):.2f} s",
        health_during_outage=health_down,
        health_200_again_after=f"{health_back:.1f} s",
        acknowledged_writes=f"{len(load.tasks)} tasks, {len(load.bids)} bids ({bids_during} during the outage)",
        all_bids_judged_after=f"{judged_in:.1f} s from Redis back",
        lost=f"{lost} writes, {pending_judgements(stack, load.bids)} judge jobs" if lost else "nothing",
    )
    assert during and all(0 < a.status < 500 for a in load.answers), [
        (a.op, a.status, a.error) for a in load.answers if not 0 < a.status < 500
    ]
    assert {a.status for a in during if a.op == "create bid"} == {201}
    # Counted, so with X-RateLimit headers: what was over before Redis was told to stop, and what started
    # over 2 s after it listened again. Not what was in flight at the stop: its start says nothing of when
    # the server counted it, and Redis exits within milliseconds of its SIGTERM.
    counted = [a for a in before if a.at + a.seconds < down_at] + [a for a in after if a.at > up_at + 2]
    assert all(a.rate_limited_headers for a in counted), described(
        [a for a in counted if not a.rate_limited_headers], down_at, up_at
    )
    # Failed open: served uncounted, without X-RateLimit headers, while Redis was surely away.
    uncounted = [a for a in during if a.at > stopped_at and a.at + a.seconds < restart_at]
    assert uncounted and not any(a.rate_limited_headers for a in uncounted)
    assert health_down and set(health_down[1:]) == {503}
    assert bids_during > 0 and lost == 0
    assert "rate limit counters unavailable" in stack.log_text()


def test_postgresql_restarted_under_load(stack):
    """While PostgreSQL is away requests answer 503 quickly; afterwards everything is 2xx again by itself."""
    load = Load(stack, market(stack), pause=LOAD_PAUSE).start()
    try:
        time.sleep(3)
        down_at = time.monotonic()
        stack.postgres.stop(mode="fast")
        time.sleep(5)
        stack.postgres.start()
        up_at = time.monotonic()
        time.sleep(10)
    finally:
        load.stop()
    answers = sorted(load.answers, key=lambda a: a.at)
    gap = [a for a in answers if down_at <= a.at < up_at]
    failed_after = [a for a in answers if a.at >= up_at and not 200 <= a.status < 300]
    recovered_in = max((a.at + a.seconds for a in failed_after), default=up_at) - up_at
    stored_tasks = stack.sql("SELECT count(*) FROM tasks_market_task WHERE id = ANY(%s::uuid[])", load.tasks)[0][0]
    stored_bids = stack.sql("SELECT count(*) FROM tasks_market_bid WHERE id = ANY(%s::uuid[])", load.bids)[0][0]
    lost = (len(load.tasks) - stored_tasks) + (len(load.bids) - stored_bids)
    report(
        "PostgreSQL restarted (down 5 s) under load",
        requests=len(answers),
        statuses_during_gap=by_op(gap),
        slowest_answer_during_gap=f"{max(a.seconds for a in gap):.2f} s",
        statuses_after_restart=statuses([a for a in answers if a.at >= up_at]),
        all_2xx_again_after=f"{recovered_in:.1f} s",
        acknowledged_writes=f"{len(load.tasks)} tasks, {len(load.bids)} bids",
        lost=f"{lost} acknowledged writes" if lost else "nothing",
    )
    bad = [(a.op, a.status, a.error) for a in answers if a.status not in (200, 201, 503)]
    assert not bad, bad
    assert any(a.status == 503 for a in gap), "the restart was not noticed"
    assert all('"database_unavailable"' in a.error for a in answers if a.status == 503)
    assert max(a.seconds for a in gap) < 5, "a request hung while the database was away"
    assert recovered_in < 5, failed_after
    assert all(200 <= a.status < 300 for a in answers if a.at >= up_at + recovered_in)
    assert lost == 0


def test_worker_child_killed_mid_job_is_redelivered_and_applied_once(tmp_path):
    """SIGKILL of the pool process running a bid's judge job: the job is handed back and judged once.

    Agents must be public https endpoints in production (the SSRF guard refuses 127.0.0.1), so no local
    agent can hold a dispatch open here; the judge job stands in, held mid-job by a table lock the test
    takes (tests/ops/test_worker_kill.py covers the dispatch itself, with a whole worker killed).
    """
    with production_stack(tmp_path, celery_concurrency=1) as stack:
        m = market(stack)
        main, children = stack.worker_processes()
        assert len(children) == 1
        with stack.client(m.poster) as poster, stack.client(m.bidder) as bidder:
            task_id = poster.post("/api/v1/tasks", json=task_body(1)).json()["id"]
            for pid in (main, *children):  # the job waits in Redis while the test takes the lock
                os.kill(pid, signal.SIGSTOP)
            try:
                response = bidder.post(f"/api/v1/tasks/{task_id}/bids", json=bid_body(m.agent_id))
                assert response.status_code == 201, response.text
                bid_id = response.json()["id"]
                lock = psycopg.connect(stack.postgres.url)
                lock.execute("LOCK TABLE tasks_market_bidjudgement IN ACCESS EXCLUSIVE MODE")
            finally:
                for pid in (main, *children):
                    os.kill(pid, signal.SIGCONT)
        try:

            def waiting_on_lock() -> list[int]:
                return [
                    row[0]
                    for row in stack.sql(
                        "SELECT pid FROM pg_stat_activity WHERE wait_event_type = 'Lock' AND query ILIKE %s",
                        "%bidjudgement%",
                    )
                ]

            first = wait_until(waiting_on_lock, "the judge job to start and wait on the lock", timeout=30)
            os.kill(children[0], signal.SIGKILL)  # mid-job: the message is not acknowledged
            _, respawned = wait_until(
                lambda: (w := stack.worker_processes()) and w[1] and w[1] != children and w,
                "a new pool process",
                timeout=30,
            )
            second = wait_until(
                lambda: [pid for pid in waiting_on_lock() if pid not in first],
                "the redelivered judge job to start again",
                timeout=30,
            )
        finally:
            lock.rollback()  # release: both the dead process's query and the new one go on
            lock.close()
        wait_until(
            lambda: (
                stack.sql("SELECT status FROM tasks_market_bidjudgement WHERE bid_id = %s", bid_id)[0][0] == "completed"
            ),
            "the judgement",
            timeout=30,
        )
        with stack.client(m.poster) as poster:
            listed = poster.get(f"/api/v1/tasks/{task_id}/bids").json()
        log = stack.log_text()
        received = [line for line in log.splitlines() if "judge_bid[" in line]
        judgements = stack.sql(
            "SELECT status, score, evaluated_at FROM tasks_market_bidjudgement WHERE bid_id = %s", bid_id
        )
        report(
            "Celery pool process killed (SIGKILL) mid judge job",
            killed_pid=children[0],
            new_pool_process=respawned,
            job_started=f"{len(first) + len(second)} times (before and after the kill)",
            worker_log=[line[:200] for line in received],
            judgement=judgements,
            lost="nothing" if judgements[0][0] == "completed" else "the judgement",
        )
        assert len(judgements) == 1 and judgements[0][0] == "completed" and judgements[0][1] is not None
        [bid] = [b for b in listed["items"] if b["id"] == bid_id]
        assert bid["judge_status"] == "completed"
        assert "WorkerLostError" in log or "signal 9" in log
