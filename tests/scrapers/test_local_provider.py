"""The local provider: a real scraper of pages served by a local HTTP server."""

from __future__ import annotations

import pytest
from django.utils import timezone

from scrapers.models import LocalJobStatus, LocalScrapeJob
from scrapers.providers import SnapshotNotFound, get_scraper_provider
from scrapers.providers.local import LocalScraperProvider, local_job_run

pytestmark = pytest.mark.django_db


def test_trigger_enqueues_the_scrape_after_commit(pages, django_capture_on_commit_callbacks):
    provider = LocalScraperProvider()
    with django_capture_on_commit_callbacks() as callbacks:
        snapshot_id = provider.trigger(dataset_id="pages", inputs=[{"url": f"{pages}/acme"}])

    assert provider.progress(snapshot_id).status == "starting"
    assert provider.download(snapshot_id) is None  # still building
    assert len(callbacks) == 1

    callbacks[0]()

    progress = provider.progress(snapshot_id)
    assert (progress.status, progress.records, progress.errors, progress.error_message) == ("ready", 1, 0, None)
    [record] = provider.download(snapshot_id)
    assert record["title"] == "Acme Rockets"
    assert record["status_code"] == 200
    assert record["colors"][0] == "#ff5500"
    assert record["social_links"] == {"instagram": "https://www.instagram.com/acme"}
    assert record["headings"][0]["text"] == "Launch today"


def test_progress_counts_records_as_the_scrape_goes(pages, dead_url):
    job = LocalScrapeJob.objects.create(
        id="s_" + "a" * 20,
        dataset_id="pages",
        inputs=[{"url": f"{pages}/acme"}, {"url": f"{dead_url}/"}, {"url": f"{pages}/globex"}],
    )
    provider = get_scraper_provider("local")

    assert local_job_run(job_id=job.id, budget_seconds=0) is True  # one input, then hand over
    first = provider.progress(job.id)
    assert (first.status, first.records, first.errors) == ("running", 1, 0)
    assert provider.download(job.id) is None

    assert local_job_run(job_id=job.id, budget_seconds=0) is True
    second = provider.progress(job.id)
    assert (second.status, second.records, second.errors) == ("running", 1, 1)

    assert local_job_run(job_id=job.id, budget_seconds=0) is False
    done = provider.progress(job.id)
    assert (done.status, done.records, done.errors) == ("ready", 2, 1)
    assert [r["title"] for r in provider.download(job.id)] == ["Acme Rockets", "Globex"]


def test_running_the_job_again_changes_nothing(pages):
    job = LocalScrapeJob.objects.create(id="s_" + "b" * 20, dataset_id="pages", inputs=[{"url": f"{pages}/acme"}])
    local_job_run(job_id=job.id)
    before = LocalScrapeJob.objects.get(pk=job.id)

    assert local_job_run(job_id=job.id) is False

    after = LocalScrapeJob.objects.get(pk=job.id)
    assert (after.outcomes, after.finished_at, after.status) == (before.outcomes, before.finished_at, "ready")


def test_a_job_held_by_another_run_is_left_alone(pages):
    held_until = timezone.now() + timezone.timedelta(minutes=5)
    job = LocalScrapeJob.objects.create(
        id="s_" + "c" * 20,
        dataset_id="pages",
        inputs=[{"url": f"{pages}/acme"}],
        status=LocalJobStatus.RUNNING,
        lease_until=held_until,
    )

    assert local_job_run(job_id=job.id) is False

    job.refresh_from_db()
    assert (job.outcomes, job.lease_until) == ([], held_until)


def test_a_job_whose_worker_died_is_resumed_after_its_lease(pages):
    job = LocalScrapeJob.objects.create(
        id="s_" + "d" * 20,
        dataset_id="pages",
        inputs=[{"url": f"{pages}/acme"}, {"url": f"{pages}/globex"}],
        status=LocalJobStatus.RUNNING,
        outcomes=[{"input": {"url": f"{pages}/acme"}, "url": f"{pages}/acme", "record": {"title": "from before"}}],
        records_count=1,
        lease_until=timezone.now() - timezone.timedelta(seconds=1),
    )

    local_job_run(job_id=job.id)

    job.refresh_from_db()
    assert job.status == "ready"
    assert [r["title"] for r in job.records] == ["from before", "Globex"]


@pytest.mark.parametrize(
    ("item", "error"),
    [
        ({"url": "ftp://example.com/file"}, "Refused: The URL scheme must be http or https."),
        ({"name": "no url"}, "The input has no url."),
        ("just a string", "The input has no url."),
    ],
)
def test_bad_inputs_are_recorded_as_errors(item, error):
    job = LocalScrapeJob.objects.create(id="s_" + "e" * 20, dataset_id="pages", inputs=[item])

    local_job_run(job_id=job.id)

    job.refresh_from_db()
    assert (job.status, job.errors_count) == ("failed", 1)
    assert job.outcomes[0]["error"] == error


def test_private_addresses_are_refused_unless_allowed(settings, pages):
    settings.OUTBOUND_ALLOW_PRIVATE_URLS = False
    job = LocalScrapeJob.objects.create(id="s_" + "f" * 20, dataset_id="pages", inputs=[{"url": f"{pages}/acme"}])

    local_job_run(job_id=job.id)

    job.refresh_from_db()
    assert job.status == "failed"
    assert job.outcomes[0]["error"].startswith("Refused:")


def test_unknown_ids_are_not_found():
    provider = LocalScraperProvider()

    with pytest.raises(SnapshotNotFound):
        provider.progress("s_nope")
    with pytest.raises(SnapshotNotFound):
        provider.download("s_nope")
