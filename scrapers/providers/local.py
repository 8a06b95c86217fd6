"""The local scraping provider: a real scraper that runs on this machine, in Celery.

`trigger` records a LocalScrapeJob and enqueues `scrapers.tasks.run_local_scrape` after commit.
The task fetches every input URL under the same SSRF rules as the free tools
(`core.http.outbound.fetch`: timeouts, size cap, private addresses refused unless allowed, redirects
re-checked), extracts the page facts, and records one outcome per input, updating the counts as
it goes, so `progress` reports the collection while it runs. Like a hosted provider, a snapshot
with some failed inputs is `ready` with an error count; one whose inputs all failed is `failed`.
"""

from __future__ import annotations

import logging
import secrets
import string
import time
from datetime import timedelta
from typing import Any

from django.db.models import Q
from django.db.models.functions import Coalesce
from django.utils import timezone

from core.http.outbound import OutboundError, UnsafeURL, fetch
from core.ops.enqueue import enqueue_after_commit
from scrapers.html_facts import extract_page_facts
from scrapers.models import LocalJobStatus, LocalScrapeJob
from scrapers.providers.base import Progress, SnapshotNotFound, strip_nul

logger = logging.getLogger(__name__)

_ID_ALPHABET = string.ascii_lowercase + string.digits
# Held while a task processes a job; longer than Celery's hard time limit, so it only lapses when
# the worker died, and then a redelivered task may pick the job up where it stopped.
LEASE = timedelta(minutes=10)
# A task stops starting new fetches after this long and re-enqueues itself for the rest, which keeps
# every run well inside CELERY_TASK_SOFT_TIME_LIMIT whatever the number of inputs.
BUDGET_SECONDS = 60.0
_PENDING = (LocalJobStatus.STARTING, LocalJobStatus.RUNNING)


def new_snapshot_id() -> str:
    """An id shaped like a hosted provider's: `s_` and 20 lowercase alphanumerics."""
    return "s_" + "".join(secrets.choice(_ID_ALPHABET) for _ in range(20))


class LocalScraperProvider:
    name = "local"

    def trigger(self, *, dataset_id: str, inputs: list[dict]) -> str:
        job = LocalScrapeJob.objects.create(id=new_snapshot_id(), dataset_id=dataset_id, inputs=list(inputs))
        enqueue_after_commit("scrapers.tasks.run_local_scrape", job.id)
        return job.id

    def progress(self, snapshot_id: str) -> Progress:
        job = LocalScrapeJob.objects.filter(pk=snapshot_id).first()
        if job is None:
            raise SnapshotNotFound()
        return Progress(
            status=job.status,
            records=job.records_count,
            errors=job.errors_count,
            error_message=job.error_message or None,
        )

    def download(self, snapshot_id: str) -> list[dict] | None:
        job = LocalScrapeJob.objects.filter(pk=snapshot_id).first()
        if job is None:
            raise SnapshotNotFound()
        if job.status in _PENDING:
            return None
        return job.records


# --- The work itself ----------------------------------------------------------------------------


def local_job_run(*, job_id: str, budget_seconds: float = BUDGET_SECONDS) -> bool:
    """Process the job's remaining inputs. Returns True when inputs remain for another run.

    Safe to run twice, even at once: the run claims a lease with a conditional UPDATE, and every
    write is conditional on still holding it, so a second run either finds nothing to do or
    continues after the last recorded input.
    """
    now = timezone.now()
    lease = now + LEASE
    claimed = (
        LocalScrapeJob.objects.filter(pk=job_id, status__in=_PENDING)
        .filter(Q(lease_until__isnull=True) | Q(lease_until__lt=now))
        .update(status=LocalJobStatus.RUNNING, lease_until=lease, started_at=Coalesce("started_at", now))
    )
    if not claimed:
        return False
    job = LocalScrapeJob.objects.get(pk=job_id)
    outcomes = list(job.outcomes)
    started = time.monotonic()
    while len(outcomes) < len(job.inputs):
        outcomes.append(strip_nul(scrape_input(job.inputs[len(outcomes)])))
        renewed = timezone.now() + LEASE
        held = LocalScrapeJob.objects.filter(pk=job_id, lease_until=lease).update(
            outcomes=outcomes,
            records_count=sum(1 for o in outcomes if "record" in o),
            errors_count=sum(1 for o in outcomes if "error" in o),
            lease_until=renewed,
        )
        if not held:
            logger.warning("local scrape %s: lease lost, leaving the job to its new holder", job_id)
            return False
        lease = renewed
        if len(outcomes) < len(job.inputs) and time.monotonic() - started >= budget_seconds:
            LocalScrapeJob.objects.filter(pk=job_id, lease_until=lease).update(lease_until=None)
            return True
    _finish(job_id, lease, outcomes)
    return False


def _finish(job_id: str, lease, outcomes: list[dict]) -> None:
    errors = [o for o in outcomes if "error" in o]
    records = len(outcomes) - len(errors)
    failed = bool(errors) and records == 0
    message = ""
    if errors:
        first = errors[0]
        message = f"{len(errors)} of {len(outcomes)} inputs failed. First: {first.get('url') or '?'}: {first['error']}"
    LocalScrapeJob.objects.filter(pk=job_id, lease_until=lease).update(
        status=LocalJobStatus.FAILED if failed else LocalJobStatus.READY,
        error_message=message,
        finished_at=timezone.now(),
        lease_until=None,
    )


def scrape_input(item: Any) -> dict:
    """Fetch one input's page and extract its facts. Never raises: a failure is the outcome."""
    url = item.get("url") if isinstance(item, dict) else None
    if not isinstance(url, str) or not url:
        return {"input": item, "error": "The input has no url."}
    try:
        page = fetch(url, schemes=("http", "https"))
    except UnsafeURL as exc:
        return {"input": item, "url": url, "error": f"Refused: {exc}"}
    except OutboundError as exc:
        return {"input": item, "url": url, "error": f"The page could not be fetched ({exc})."}
    if page.status_code >= 400:
        return {"input": item, "url": url, "error": f"The page answered HTTP {page.status_code}."}
    try:
        facts = extract_page_facts(page.text, page.url)
    except Exception:  # one odd page must not stop the collection
        logger.exception("local scrape: extracting facts from %s failed", url)
        return {"input": item, "url": url, "error": "The page could not be read."}
    record = {
        "url": url,
        "final_url": page.url,
        "status_code": page.status_code,
        "truncated": page.truncated,
        "scraped_at": timezone.now().isoformat(),
        **facts,
    }
    return {"input": item, "url": url, "record": record}
