"""Inbound payment-provider events (docs/decisions.md#payments-webhook-inbound): verify, store, apply at most once.

Every correctly signed POST is stored whole as an InboundDelivery before it is processed; a refused
one (unsigned, badly signed, too large) only as a small row without its body or headers. A verified event is kept
once per provider event id (InboundEvent) and applied by claiming that row with a conditional
UPDATE inside the transaction that runs the handlers and marks it processed: concurrent copies
wait on the row lock and then find it processed (`duplicate`). A handler that raises rolls its
work back and leaves the event `failed`; the provider's retry, the admin action or
`manage.py reprocess_payment_events` apply it later. An event older than one already applied to
the same provider object is recorded as `skipped`, so late events cannot roll state back. An
authentic event a handler refuses (registry.EventRejected, e.g. an amount that does not match the
payment) is recorded as `rejected` with the reason, logged at ERROR and answered 200: it is final,
like `processed`, and it does not move the object's cursor.
"""

from __future__ import annotations

import ipaddress
import json
import logging
from collections.abc import Mapping
from dataclasses import dataclass
from datetime import UTC, datetime
from typing import Any
from uuid import UUID

from django.conf import settings
from django.db import transaction
from django.db.models import F
from django.utils import timezone

from core.ops.metrics import PAYMENTS_SETTLED, business_count
from payments import registry, signing
from webhooks_app.models import (
    InboundDelivery,
    InboundEvent,
    InboundEventStatus,
    InboundObjectState,
    InboundOutcome,
)

logger = logging.getLogger(__name__)

MAX_BODY_BYTES = 256 * 1024
_CLAIMABLE = (InboundEventStatus.PENDING, InboundEventStatus.IGNORED, InboundEventStatus.FAILED)
_NOT_STORED_HEADERS = {"authorization", "cookie", "proxy-authorization"}
_EPOCH = datetime(1970, 1, 1, tzinfo=UTC)


class InvalidEvent(ValueError):
    """A correctly signed body that is not a provider event."""


@dataclass(frozen=True)
class InboundResult:
    outcome: str  # InboundOutcome
    event_id: str = ""
    error: str = ""


def _clean(text: str) -> str:
    return text.replace("\x00", "\ufffd")  # PostgreSQL text cannot hold NUL


def _ip_or_none(value: str | None) -> str | None:
    try:
        return str(ipaddress.ip_address((value or "").strip()))
    except ValueError:
        return None


def parse_event(body: bytes) -> dict[str, Any]:
    """`{id, type, created, data: {object: {...}}}`, or InvalidEvent."""
    try:
        event = json.loads(body)
    except RecursionError as exc:  # nested deeper than Python's stack: signed, yet still not an event
        raise InvalidEvent("The body nests too deeply.") from exc
    except ValueError as exc:
        raise InvalidEvent("The body is not JSON.") from exc
    if not isinstance(event, dict):
        raise InvalidEvent("The event is not a JSON object.")
    event_id, event_type, created = event.get("id"), event.get("type"), event.get("created")
    if not isinstance(event_id, str) or not 0 < len(event_id) <= 255:
        raise InvalidEvent("The event has no valid `id`.")
    if not isinstance(event_type, str) or not 0 < len(event_type) <= 100:
        raise InvalidEvent("The event has no valid `type`.")
    if not isinstance(created, int) or isinstance(created, bool) or not 0 <= created < 2**40:
        raise InvalidEvent("The event has no valid `created` timestamp.")
    data = event.get("data")
    if not isinstance(data, dict) or not isinstance(data.get("object"), dict):
        raise InvalidEvent("The event has no `data.object`.")
    if "\\u0000" in body.decode("utf-8", errors="replace"):
        raise InvalidEvent("The event contains a NUL character.")
    return event


def inbound_receive(*, body: bytes | None, headers: Mapping[str, str], remote_ip: str | None) -> InboundResult:
    """Handle one POST to the payments webhook. `body` is None when it was over MAX_BODY_BYTES.

    The signature is checked before anything is stored: a refused delivery (too large, unsigned,
    badly signed) leaves one small row (time, remote address, size, reason) and neither its body nor
    its headers, so unsigned traffic cannot fill the database. A correctly signed one is stored whole
    before it is processed (docs/decisions.md#payments-webhook-inbound).
    """
    refused = _refusal(body, headers)
    if refused is not None:
        InboundDelivery.objects.create(
            body_size=len(body) if body is not None else 0,
            remote_ip=_ip_or_none(remote_ip),
            outcome=refused.outcome,
            error=refused.error,
            finished_at=timezone.now(),
        )
        return refused
    delivery = InboundDelivery.objects.create(
        headers={_clean(k): _clean(v) for k, v in headers.items() if k.lower() not in _NOT_STORED_HEADERS},
        body=_clean(body.decode("utf-8", errors="replace")),
        body_size=len(body),
        remote_ip=_ip_or_none(remote_ip),
        signature_valid=True,
    )
    result = _receive(delivery, body)
    InboundDelivery.objects.filter(pk=delivery.pk).update(
        outcome=result.outcome, error=result.error[:4000], finished_at=timezone.now()
    )
    return result


def _refusal(body: bytes | None, headers: Mapping[str, str]) -> InboundResult | None:
    """Why a delivery is refused before it is stored, or None for a correctly signed one."""
    if body is None:
        return InboundResult(InboundOutcome.TOO_LARGE, error=f"The body is over {MAX_BODY_BYTES} bytes.")
    names = (signing.HEADER.lower(), signing.STRIPE_HEADER.lower())
    header = next((v for name in names for k, v in headers.items() if k.lower() == name), None)
    if not signing.verify(body, header, settings.PAYMENTS_WEBHOOK_SECRET):
        if not settings.PAYMENTS_WEBHOOK_SECRET:
            logger.warning("PAYMENTS_WEBHOOK_SECRET is not set: every payments webhook delivery is refused")
        reason = "Missing signature." if not header else "Invalid signature."
        return InboundResult(InboundOutcome.INVALID_SIGNATURE, error=reason)
    return None


def _receive(delivery: InboundDelivery, body: bytes) -> InboundResult:
    try:
        payload = parse_event(body)
    except InvalidEvent as exc:
        return InboundResult(InboundOutcome.INVALID_EVENT, error=str(exc))

    obj = payload["data"]["object"]
    object_id = obj.get("id") if isinstance(obj.get("id"), str) else ""
    account = payload.get("account")
    if object_id and isinstance(account, str) and account:
        # A connected account's objects are ordered within that account: a capability's id ("transfers") is the
        # same on every account, so one account's event must not make another's look older.
        object_id = f"{account}/{object_id}"
    event, _ = InboundEvent.objects.get_or_create(
        event_id=payload["id"],
        defaults={
            "type": payload["type"],
            "object_id": object_id[:255],
            "created": datetime.fromtimestamp(payload["created"], tz=UTC),
            "payload": payload,
        },
    )
    InboundDelivery.objects.filter(pk=delivery.pk).update(
        inbound_event=event, event_id=event.event_id, event_type=event.type
    )
    outcome, error = inbound_event_process(event_pk=event.pk)
    return InboundResult(outcome, event_id=event.event_id, error=error)


def inbound_event_process(*, event_pk: UUID) -> tuple[str, str]:
    """Apply a stored event if nobody has; returns (InboundOutcome, error)."""
    with transaction.atomic():
        claimed = InboundEvent.objects.filter(pk=event_pk, status__in=_CLAIMABLE).update(
            attempts=F("attempts") + 1, last_attempt_at=timezone.now()
        )
        if not claimed:
            return InboundOutcome.DUPLICATE, ""
        event = InboundEvent.objects.get(pk=event_pk)
        handlers = registry.handlers_for(event.type)
        if not handlers:
            _mark(event, InboundEventStatus.IGNORED)
            return InboundOutcome.IGNORED, ""

        state = _object_state(event)
        if state is not None and event.created < state.last_event_created:
            _mark(event, InboundEventStatus.SKIPPED, error=f"Older than {state.last_event_id}, already applied.")
            return InboundOutcome.SKIPPED, ""

        account = event.payload.get("account")
        provider_event = registry.ProviderEvent(
            id=event.event_id,
            type=event.type,
            created=event.created,
            object=event.payload["data"]["object"],
            account=account if isinstance(account, str) else "",
        )
        rejected: registry.EventRejected | None = None
        try:
            with transaction.atomic():
                for handler in handlers:
                    try:
                        handler(provider_event)
                    except registry.EventRejected as exc:  # what the handlers recorded is kept
                        rejected = exc
                        break
        except Exception as exc:
            logger.exception("payment event %s (%s) failed in its handler", event.event_id, event.type)
            error = f"{type(exc).__name__}: {exc}"
            _mark(event, InboundEventStatus.FAILED, error=error)
            return InboundOutcome.FAILED, error

        if rejected is not None:
            reason = str(rejected) or "Refused by its handler."
            logger.error("payment event %s (%s) rejected: %s", event.event_id, event.type, reason)
            _mark(event, InboundEventStatus.REJECTED, error=reason, processed_at=timezone.now())
            return InboundOutcome.REJECTED, reason

        _mark(event, InboundEventStatus.PROCESSED, processed_at=timezone.now())
        business_count(PAYMENTS_SETTLED, type=event.type)
        if state is not None:
            state.last_event_created = event.created
            state.last_event_id = event.event_id
            state.save(update_fields=["last_event_created", "last_event_id"])
        return InboundOutcome.PROCESSED, ""


def _object_state(event: InboundEvent) -> InboundObjectState | None:
    """The locked cursor of the event's object (created at the epoch the first time), if it has an id."""
    if not event.object_id:
        return None
    InboundObjectState.objects.get_or_create(
        object_id=event.object_id, defaults={"last_event_created": _EPOCH, "last_event_id": ""}
    )
    return InboundObjectState.objects.select_for_update().get(object_id=event.object_id)


def _mark(event: InboundEvent, status: str, *, error: str = "", processed_at=None) -> None:
    event.status = status
    event.last_error = error[:4000]
    fields = ["status", "last_error"]
    if processed_at is not None:
        event.processed_at = processed_at
        fields.append("processed_at")
    event.save(update_fields=fields)


def inbound_events_reprocess(*, event_pks: list[UUID] | None = None, progress=None) -> dict[str, int]:
    """Apply failed (or the given) events again, in the order they arrived. Returns counts by outcome.

    `progress(index, total, event, outcome, error)` is called after each one.
    """
    queryset = InboundEvent.objects.order_by("received_at")
    queryset = (
        queryset.filter(pk__in=event_pks)
        if event_pks is not None
        else queryset.filter(status=InboundEventStatus.FAILED)
    )
    events = list(queryset.only("pk", "event_id", "type"))
    counts: dict[str, int] = {}
    for index, event in enumerate(events, start=1):
        outcome, error = inbound_event_process(event_pk=event.pk)
        counts[outcome] = counts.get(outcome, 0) + 1
        if progress is not None:
            progress(index, len(events), event, outcome, error)
    return counts
