"""Reads for outbound webhooks, always scoped to the owner (someone else's subscription is a 404)."""

from __future__ import annotations

from uuid import UUID

from django.db.models import Prefetch, QuerySet

from core.db import counters
from core.http.errors import NotFound
from webhooks_app.counters import subscription_deliveries
from webhooks_app.models import WebhookAttempt, WebhookDelivery, WebhookSubscription


def subscription_list(*, owner) -> QuerySet[WebhookSubscription]:
    return WebhookSubscription.objects.filter(owner=owner).order_by("-created_at", "-id")


def subscription_urls_of(owner) -> list[tuple[UUID, str]]:
    """Each subscription's (id, URL): where the owner's events are sent (accounts.review lists them)."""
    return list(subscription_list(owner=owner).values_list("id", "url"))


def subscription_get(*, owner, subscription_id: UUID) -> WebhookSubscription:
    subscription = WebhookSubscription.objects.filter(owner=owner, id=subscription_id).first()
    if subscription is None:
        raise NotFound()
    return subscription


def delivery_list(*, subscription: WebhookSubscription, status: str | None = None) -> QuerySet[WebhookDelivery]:
    deliveries = (
        WebhookDelivery.objects.filter(subscription=subscription)
        .select_related("event")
        .prefetch_related(Prefetch("attempts", queryset=WebhookAttempt.objects.order_by("number")))
        .order_by("-created_at", "-id")
    )
    return deliveries.filter(status=status) if status else deliveries


def delivery_total(*, subscription: WebhookSubscription, status: str | None = None) -> int:
    """The count of `delivery_list(subscription=..., status=...)`, kept per status
    (`deliveries.subscription.<subscription>.<status>`, docs/decisions.md#lists)."""
    return counters.sum_of(subscription_deliveries(subscription.pk, status))
