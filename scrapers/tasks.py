"""Celery tasks of the scrapers app: thin, taking ids, each safe to run twice."""

from __future__ import annotations

from celery import shared_task

from core.http.errors import ProviderUnavailable
from scrapers.providers.local import local_job_run
from scrapers.services import snapshot_fetch_results, snapshots_poll

RESULTS_MAX_RETRIES = 8


@shared_task(name="scrapers.tasks.run_local_scrape")
def run_local_scrape(job_id: str) -> None:
    """The local provider's scraper. A run that spends its time budget hands the rest to a new run."""
    if local_job_run(job_id=job_id):
        run_local_scrape.delay(job_id)


@shared_task(name="scrapers.tasks.poll_snapshots")
def poll_snapshots() -> int:
    """Beat: one polling pass over the running snapshots that are due (see CELERY_BEAT_SCHEDULE)."""
    return len(snapshots_poll())


@shared_task(name="scrapers.tasks.fetch_snapshot_results", bind=True, max_retries=RESULTS_MAX_RETRIES)
def fetch_snapshot_results(self, snapshot_pk: str) -> None:
    """Download a ready snapshot's records; retried with backoff while the provider builds them or is away."""
    final = self.request.retries >= RESULTS_MAX_RETRIES
    countdown = min(10 * 2**self.request.retries, 600)
    try:
        done = snapshot_fetch_results(snapshot_pk=snapshot_pk, final_attempt=final)
    except ProviderUnavailable as exc:
        raise self.retry(exc=exc, countdown=countdown) from exc
    if not done:
        raise self.retry(countdown=countdown)
