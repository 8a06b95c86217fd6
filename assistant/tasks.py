from __future__ import annotations

from celery import shared_task

from assistant.services import image_generations_refund_stale


@shared_task(name="assistant.tasks.refund_stale_image_generations")
def refund_stale_image_generations() -> int:
    """Give back the credits of generations whose process died mid-call. Idempotent (refunds once)."""
    return image_generations_refund_stale()
