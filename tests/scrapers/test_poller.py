"""The beat poller: backoff, hard deadline, idempotency, concurrent passes; and `manage.py poll_snapshots`."""

from __future__ import annotations

import threading
from datetime import timedelta
from io import StringIO

import pytest
from django.core.management import call_command
from django.db import connection
from django.utils import timezone

from scrapers.models import LocalJobStatus, LocalScrapeJob, Snapshot, SnapshotStatus
from scrapers.services import snapshot_trigger, snapshots_poll
from scrapers.tasks import poll_snapshots
from tests.scrapers.factories import LocalScrapeJobFactory, SnapshotFactory

pytestmark = pytest.mark.django_db


def test_a_new_snapshot_is_first_polled_10_s_after_it_was_triggered(staff, pages):
    before = timezone.now()
    snapshot = snapshot_trigger(user=staff, dataset_id="pages", inputs=[{"url": f"{pages}/acme"}])

    assert before + timedelta(seconds=10) <= snapshot.next_poll_at <= timezone.now() + timedelta(seconds=10)
    assert before + timedelta(hours=2) <= snapshot.deadline_at <= timezone.now() + timedelta(hours=2)


def test_running_snapshots_back_off_from_10_s_doubling_to_5_min():
    now = timezone.now()
    snapshot = SnapshotFactory(next_poll_at=now, deadline_at=now + timedelta(days=1))
    waits = []
    for _ in range(7):
        [outcome] = snapshots_poll(now=now)
        assert outcome.outcome == "running"
        snapshot.refresh_from_db()
        waits.append((snapshot.next_poll_at - now).total_seconds())
        now = snapshot.next_poll_at

    assert waits == [20, 40, 80, 160, 300, 300, 300]
    assert snapshot.poll_attempts == 7
    assert snapshot.last_polled_at is not None


def test_nothing_is_polled_before_its_turn():
    now = timezone.now()
    snapshot = SnapshotFactory(next_poll_at=now + timedelta(seconds=5))

    assert snapshots_poll(now=now) == []

    snapshot.refresh_from_db()
    assert (snapshot.poll_attempts, snapshot.next_poll_at) == (0, now + timedelta(seconds=5))


def test_a_second_pass_at_the_same_moment_does_nothing():
    now = timezone.now()
    snapshot = SnapshotFactory(next_poll_at=now)

    first = snapshots_poll(now=now)
    second = snapshots_poll(now=now)

    assert (len(first), second) == (1, [])
    snapshot.refresh_from_db()
    assert snapshot.poll_attempts == 1


def test_a_finished_provider_job_makes_the_snapshot_final(django_capture_on_commit_callbacks):
    now = timezone.now()
    job = LocalScrapeJobFactory(status=LocalJobStatus.READY, records_count=4, errors_count=1, error_message="1 failed")
    snapshot = SnapshotFactory(snapshot_id=job.id, next_poll_at=now)

    [outcome] = snapshots_poll(now=now)

    snapshot.refresh_from_db()
    assert outcome.outcome == "ready"
    assert (snapshot.status, snapshot.records_count, snapshot.errors_count) == ("ready", 4, 1)
    assert (snapshot.completed_at, snapshot.next_poll_at) == (now, None)
    assert snapshots_poll(now=now + timedelta(hours=1)) == []  # final snapshots are never polled again


def test_past_the_deadline_a_running_snapshot_is_failed():
    now = timezone.now()
    snapshot = SnapshotFactory(next_poll_at=now, deadline_at=now - timedelta(seconds=1))
    Snapshot.objects.filter(pk=snapshot.pk).update(created_at=now - timedelta(hours=2, seconds=1))

    [outcome] = snapshots_poll(now=now)

    snapshot.refresh_from_db()
    assert (outcome.outcome, snapshot.status, snapshot.next_poll_at) == ("failed", "failed", None)
    assert (
        snapshot.error_message == "Gave up: the snapshot was not ready 2 h after it was triggered (last seen: running)."
    )
    assert snapshot.completed_at == now


def test_a_result_that_arrives_at_the_deadline_still_counts():
    now = timezone.now()
    job = LocalScrapeJobFactory(status=LocalJobStatus.READY, records_count=1)
    snapshot = SnapshotFactory(snapshot_id=job.id, next_poll_at=now, deadline_at=now - timedelta(seconds=1))

    snapshots_poll(now=now)

    snapshot.refresh_from_db()
    assert snapshot.status == "ready"


def test_an_unreachable_provider_is_retried_with_backoff_then_given_up(settings, dead_url):
    settings.BRIGHTDATA_API_TOKEN = "tok"
    settings.BRIGHTDATA_BASE_URL = dead_url
    now = timezone.now()
    snapshot = SnapshotFactory(
        provider="brightdata", snapshot_id="s_remote", next_poll_at=now, deadline_at=now + timedelta(seconds=30)
    )

    [first] = snapshots_poll(now=now)
    snapshot.refresh_from_db()
    assert (first.outcome, snapshot.status, snapshot.poll_attempts) == ("unreachable", "running", 1)
    assert snapshot.next_poll_at == now + timedelta(seconds=20)

    [last] = snapshots_poll(now=now + timedelta(seconds=40))
    snapshot.refresh_from_db()
    assert (last.outcome, snapshot.status) == ("failed", "failed")
    assert "Last error: Bright Data could not be reached" in snapshot.error_message


def test_final_snapshots_stay_final():
    now = timezone.now()
    job = LocalScrapeJobFactory(status=LocalJobStatus.RUNNING)
    snapshot = SnapshotFactory(
        snapshot_id=job.id, status=SnapshotStatus.FAILED, error_message="given up", next_poll_at=now
    )

    assert snapshots_poll(now=now, due_only=False) == []

    snapshot.refresh_from_db()
    assert (snapshot.status, snapshot.error_message) == ("failed", "given up")


def test_the_beat_task_polls_what_is_due():
    SnapshotFactory(next_poll_at=timezone.now() - timedelta(seconds=1))
    SnapshotFactory(next_poll_at=timezone.now() + timedelta(minutes=1))

    assert poll_snapshots.delay().get() == 1


@pytest.mark.django_db(transaction=True)
def test_concurrent_passes_poll_each_snapshot_once():
    now = timezone.now()
    snapshots = SnapshotFactory.create_batch(12, next_poll_at=now)
    barrier = threading.Barrier(4)
    polled: list[str] = []
    errors: list[BaseException] = []

    def one_pass():
        try:
            barrier.wait()
            polled.extend(o.snapshot.snapshot_id for o in snapshots_poll(now=now))
        except BaseException as exc:  # surfaced below
            errors.append(exc)
        finally:
            connection.close()

    threads = [threading.Thread(target=one_pass) for _ in range(4)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()

    assert errors == []
    assert sorted(polled) == sorted(s.snapshot_id for s in snapshots)
    assert set(Snapshot.objects.values_list("poll_attempts", flat=True)) == {1}


# --- manage.py poll_snapshots ------------------------------------------------------------------------------


def test_command_prints_one_line_per_snapshot_and_a_summary():
    now = timezone.now()
    ready_job = LocalScrapeJobFactory(status=LocalJobStatus.READY, records_count=2)
    ready = SnapshotFactory(snapshot_id=ready_job.id, next_poll_at=now - timedelta(seconds=1))
    running = SnapshotFactory(next_poll_at=now - timedelta(seconds=1))
    SnapshotFactory(next_poll_at=now + timedelta(minutes=1))  # not due
    out = StringIO()

    call_command("poll_snapshots", stdout=out)

    lines = out.getvalue().strip().splitlines()
    assert sorted(lines[:-1]) == sorted(
        [
            f"local:{ready.snapshot_id} ready (provider: ready, records 2, errors 0)",
            f"local:{running.snapshot_id} running (provider: running, records 0, errors 0)",
        ]
    )
    assert lines[-1] == "Polled 2 snapshot(s): 1 running, 1 ready."


def test_command_all_polls_snapshots_that_are_not_due_yet():
    SnapshotFactory(next_poll_at=timezone.now() + timedelta(minutes=1))
    out = StringIO()

    call_command("poll_snapshots", "--all", stdout=out)

    assert out.getvalue().strip().splitlines()[-1] == "Polled 1 snapshot(s): 1 running."


def test_command_with_nothing_to_do():
    out = StringIO()

    call_command("poll_snapshots", stdout=out)

    assert out.getvalue().strip() == "Polled 0 snapshot(s)."
    assert not LocalScrapeJob.objects.exists()


def test_a_pass_out_of_time_leaves_the_rest_due_for_the_next():
    now = timezone.now()
    SnapshotFactory.create_batch(3, next_poll_at=now)

    assert len(snapshots_poll(now=now, budget_seconds=0)) == 1
    assert len(snapshots_poll(now=now, budget_seconds=0)) == 1
    assert len(snapshots_poll(now=now)) == 1
    assert set(Snapshot.objects.values_list("poll_attempts", flat=True)) == {1}
