"""Celery tasks of the brands app: thin, take ids, call a service, safe to run twice."""

from __future__ import annotations

from celery import shared_task

from brands.providers.publishing import FAILED, PublishResult
from brands.services.connections import connections_refresh_due
from brands.services.discovery import competitors_discovery_run
from brands.services.publications import (
    publication_finish,
    publication_process,
    publications_expire,
    publications_requeue,
)
from brands.services.research import audit_run, audits_requeue_lost, research_cadence_queue
from core.http.errors import ProviderError, ProviderUnavailable

PUBLISH_MAX_RETRIES = 5
DISCOVERY_MAX_RETRIES = 3


@shared_task(name="brands.tasks.run_audit")
def run_audit(brand_id: str, module: str, attempt_id: str) -> str | None:
    return audit_run(brand_id=brand_id, module=module, attempt_id=attempt_id)


@shared_task(name="brands.tasks.publish_publication", bind=True, max_retries=PUBLISH_MAX_RETRIES)
def publish_publication(self, publication_id: str) -> str | None:
    try:
        return publication_process(publication_id=publication_id, resume=self.request.retries > 0)
    except ProviderUnavailable as exc:
        if self.request.retries >= PUBLISH_MAX_RETRIES:
            return publication_finish(
                publication_id=publication_id,
                result=PublishResult(status=FAILED, error_code="provider_unavailable", error_message=exc.message),
            )
        # Back-off, or the platform's Retry-After when it rate-limits (docs/decisions.md#publishing-adapters).
        countdown = max(min(30 * 2**self.request.retries, 900), getattr(exc, "retry_after", None) or 0)
        raise self.retry(exc=exc, countdown=countdown) from exc


@shared_task(name="brands.tasks.expire_preflights")
def expire_preflights() -> int:
    return publications_expire()


@shared_task(name="brands.tasks.requeue_publications")
def requeue_publications() -> int:
    return publications_requeue()


@shared_task(name="brands.tasks.discover_competitors", bind=True, max_retries=DISCOVERY_MAX_RETRIES)
def discover_competitors(self, brand_id: str) -> dict:
    """A read of the provider, then one transaction: a retry after a lost answer adds nothing twice
    (docs/decisions.md#competitor-discovery). A refused call (ProviderError) is not retried."""
    try:
        return competitors_discovery_run(brand_id=brand_id)
    except ProviderError as exc:
        return {"status": "failed", "error": exc.message}
    except ProviderUnavailable as exc:
        if self.request.retries >= DISCOVERY_MAX_RETRIES:
            return {"status": "failed", "error": exc.message}
        raise self.retry(exc=exc, countdown=min(60 * 2**self.request.retries, 900)) from exc


@shared_task(name="brands.tasks.requeue_lost_audits")
def requeue_lost_audits() -> dict:
    return audits_requeue_lost()


@shared_task(name="brands.tasks.queue_recurring_research")
def queue_recurring_research() -> dict:
    return research_cadence_queue()


@shared_task(name="brands.tasks.refresh_connection_tokens")
def refresh_connection_tokens() -> dict:
    """Refresh connected accounts' tokens before they expire (docs/decisions.md#token-refresh-and-health)."""
    return connections_refresh_due()
