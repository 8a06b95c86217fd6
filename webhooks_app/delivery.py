"""Delivering outbound webhooks: one attempt at a time, every attempt recorded (CONTRACT §10).

A delivery is claimed with a conditional UPDATE (pending and due → sending), so running the task
twice, or a retry message arriving while another worker sends, sends once. The attempt row is
written before the HTTP call and completed after it. Schedule after the first attempt: 5 s, 5 min,
30 min, 2 h, 5 h, 10 h, 10 h, each ±10 % jitter; then the delivery has failed. Only 2xx succeeds;
410 Gone disables the subscription. The URL is resolved and checked again before every call, and the
call goes to the checked address (core.outbound).
"""

from __future__ import annotations

import logging
import random
import time
from datetime import timedelta
from uuid import UUID

from django.conf import settings
from django.db import transaction
from django.db.models import F
from django.utils import timezone

from core.outbound import OutboundError, UnsafeURL, request
from signed_delivery.attempts import AttemptStatus
from signed_delivery.signing import sign_headers
from webhooks_app.models import (
    DeliveryStatus,
    WebhookAttempt,
    WebhookDelivery,
    WebhookSubscription,
)
from webhooks_app.services import enqueue_delivery, signing_secrets

logger = logging.getLogger(__name__)

RETRY_DELAYS = (5, 5 * 60, 30 * 60, 2 * 3600, 5 * 3600, 10 * 3600, 10 * 3600)  # seconds, after attempts 1..7
MAX_ATTEMPTS = len(RETRY_DELAYS) + 1
JITTER = 0.1
EXCERPT_BYTES = 1024
# A claim older than this belongs to a worker that died mid-attempt (the call itself times out at 15 s).
STUCK_AFTER = timedelta(minutes=5)
# Due deliveries are queued by their own countdown; the sweep only picks up those clearly overdue.
OVERDUE_AFTER = timedelta(minutes=1)
SWEEP_BATCH = 500


def retry_delay(attempt_number: int) -> float | None:
    """Seconds to wait after attempt `attempt_number` failed, with jitter; None when it was the last."""
    if attempt_number >= MAX_ATTEMPTS:
        return None
    base = RETRY_DELAYS[attempt_number - 1]
    return base * random.uniform(1 - JITTER, 1 + JITTER)  # noqa: S311 - jitter, not security


def _claim(delivery_id: UUID | str, now) -> bool:
    return bool(
        WebhookDelivery.objects.filter(pk=delivery_id, status=DeliveryStatus.PENDING, next_attempt_at__lte=now).update(
            status=DeliveryStatus.SENDING, claimed_at=now, attempt_count=F("attempt_count") + 1
        )
    )


def _settle(delivery: WebhookDelivery, **changes) -> None:
    WebhookDelivery.objects.filter(pk=delivery.pk, status=DeliveryStatus.SENDING).update(claimed_at=None, **changes)


def _disable(subscription: WebhookSubscription, reason: str) -> None:
    WebhookSubscription.objects.filter(pk=subscription.pk, is_active=True).update(
        is_active=False, disabled_reason=reason, disabled_at=timezone.now(), updated_at=timezone.now()
    )


def webhook_delivery_attempt(*, delivery_id: UUID | str, now=None) -> float | None:
    """Make the next attempt of a delivery if it is due. Returns seconds until the retry, if one is due.

    `now` is the scheduling clock (what is due, which secrets are still in their grace period);
    the `webhook-timestamp` header is always the real time of sending.
    """
    now = now or timezone.now()
    if not _claim(delivery_id, now):
        return None  # not due, already sent, being sent, or gone
    delivery = WebhookDelivery.objects.select_related("subscription", "event").filter(pk=delivery_id).first()
    if delivery is None:
        return None
    subscription = delivery.subscription
    if not subscription.is_active:
        _settle(
            delivery,
            status=DeliveryStatus.FAILED,
            last_error="The subscription is disabled.",
            completed_at=timezone.now(),
        )
        return None

    attempt = WebhookAttempt.objects.create(delivery=delivery, number=delivery.attempt_count, url=subscription.url)
    try:
        status_code, error, excerpt, duration_ms = _send(delivery, subscription, now)
    except Exception as exc:  # a bug must not strand the delivery in `sending`: record it as a failed attempt
        logger.exception("webhook delivery %s failed before an answer", delivery.pk)
        status_code, error, excerpt, duration_ms = None, f"Internal error: {type(exc).__name__}", "", None
    attempt_succeeded = status_code is not None and 200 <= status_code < 300
    WebhookAttempt.objects.filter(pk=attempt.pk).update(
        status=AttemptStatus.SUCCEEDED if attempt_succeeded else AttemptStatus.FAILED,
        status_code=status_code,
        duration_ms=duration_ms,
        error=error[:2000],
        response_excerpt=excerpt,
        finished_at=timezone.now(),
    )

    if attempt_succeeded:
        _settle(
            delivery,
            status=DeliveryStatus.SUCCEEDED,
            last_status_code=status_code,
            last_error="",
            completed_at=timezone.now(),
        )
        return None
    if status_code == 410:
        _disable(subscription, "The endpoint answered 410 Gone.")
        _settle(
            delivery,
            status=DeliveryStatus.FAILED,
            last_status_code=410,
            last_error="The endpoint answered 410 Gone; the subscription was disabled.",
            completed_at=timezone.now(),
        )
        return None
    delay = retry_delay(delivery.attempt_count)
    last_error = error or f"The endpoint answered {status_code}."
    if delay is None:
        _settle(
            delivery,
            status=DeliveryStatus.FAILED,
            last_status_code=status_code,
            last_error=last_error[:2000],
            completed_at=timezone.now(),
        )
        return None
    _settle(
        delivery,
        status=DeliveryStatus.PENDING,
        last_status_code=status_code,
        last_error=last_error[:2000],
        next_attempt_at=now + timedelta(seconds=delay),
    )
    return delay


def _send(delivery: WebhookDelivery, subscription: WebhookSubscription, now) -> tuple[int | None, str, str, int | None]:
    """(status code, error, response excerpt, duration in ms) of one signed POST through core.outbound:
    resolved and checked, sent to the checked address, no redirects, OUTBOUND_CALL_DEADLINE_SECONDS in
    all. The error says what failed ("connection refused", "timed out after 15 s"), never the body."""
    body = delivery.event.body.encode()
    headers = sign_headers(signing_secrets(subscription, now=now), delivery.message_id, int(time.time()), body)
    headers["content-type"] = "application/json"
    started = time.monotonic()
    try:
        result = request(
            "POST",
            subscription.url,
            content=body,
            headers=headers,
            schemes=("https",),
            max_bytes=EXCERPT_BYTES,
            deadline=settings.OUTBOUND_CALL_DEADLINE_SECONDS,
        )
    except UnsafeURL as exc:
        return None, f"The URL was refused: {exc}", "", None
    except OutboundError as exc:
        return None, f"The call failed: {exc}.", "", int((time.monotonic() - started) * 1000)
    text = result.content.decode("utf-8", errors="replace").replace("\x00", "")
    error = "" if 200 <= result.status_code < 300 else f"The endpoint answered {result.status_code}."
    return result.status_code, error, text, result.duration_ms


@transaction.atomic
def webhook_delivery_replay(*, delivery_id: UUID | str) -> bool:
    """Send a delivery again now (staff action). An exhausted delivery gets exactly one more attempt."""
    updated = (
        WebhookDelivery.objects.filter(pk=delivery_id)
        .exclude(status=DeliveryStatus.SENDING)
        .update(status=DeliveryStatus.PENDING, next_attempt_at=timezone.now(), completed_at=None)
    )
    if updated:
        enqueue_delivery(delivery_id)
    return bool(updated)


def webhook_deliveries_sweep(*, now=None) -> int:
    """Recover what a lost message or a dead worker left behind; returns how many were queued.

    Claims older than STUCK_AFTER go back to pending (their attempt is marked interrupted), and
    pending deliveries overdue by OVERDUE_AFTER are queued again.
    """
    from webhooks_app.tasks import deliver_webhook

    now = now or timezone.now()
    stuck = list(
        WebhookDelivery.objects.filter(status=DeliveryStatus.SENDING, claimed_at__lt=now - STUCK_AFTER).values_list(
            "pk", flat=True
        )[:SWEEP_BATCH]
    )
    if stuck:
        WebhookAttempt.objects.filter(delivery_id__in=stuck, status=AttemptStatus.PENDING).update(
            status=AttemptStatus.FAILED,
            error="Interrupted: the worker stopped before the attempt finished.",
            finished_at=now,
        )
        WebhookDelivery.objects.filter(pk__in=stuck, status=DeliveryStatus.SENDING).update(
            status=DeliveryStatus.PENDING, claimed_at=None, next_attempt_at=now
        )
    due = list(
        WebhookDelivery.objects.filter(status=DeliveryStatus.PENDING, next_attempt_at__lte=now - OVERDUE_AFTER)
        .order_by("next_attempt_at")
        .values_list("pk", flat=True)[:SWEEP_BATCH]
    )
    due_now = set(stuck) | set(due)
    for delivery_id in due_now:
        try:
            deliver_webhook.delay(str(delivery_id))
        except Exception:  # the broker is down: the next sweep tries again
            logger.exception("could not queue webhook delivery %s", delivery_id)
            break
    return len(due_now)
