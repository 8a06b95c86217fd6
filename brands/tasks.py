"""Celery tasks of the brands app: thin, take ids, call a service, safe to run twice."""

from __future__ import annotations

from celery import shared_task

from brands.providers.publishing import FAILED, PublishResult
from brands.services.publications import (
    publication_finish,
    publication_process,
    publications_expire,
    publications_requeue,
)
from brands.services.research import audit_run
from core.http.errors import ProviderUnavailable

PUBLISH_MAX_RETRIES = 5


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
        raise self.retry(exc=exc, countdown=min(30 * 2**self.request.retries, 900)) from exc


@shared_task(name="brands.tasks.expire_preflights")
def expire_preflights() -> int:
    return publications_expire()


@shared_task(name="brands.tasks.requeue_publications")
def requeue_publications() -> int:
    return publications_requeue()
