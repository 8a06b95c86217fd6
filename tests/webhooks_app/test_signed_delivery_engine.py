"""The signed-delivery engine's claim: an outcome is written only while the claim that made it holds."""

from __future__ import annotations

from datetime import timedelta

import pytest
from django.utils import timezone

from signed_delivery.engine import CLAIM_TIMEOUT, claims_release_stale, delivery_claim, delivery_settle
from tests.webhooks_app.factories import WebhookSubscriptionFactory
from webhooks_app.delivery import CHANNEL
from webhooks_app.models import WebhookDelivery, WebhookEvent

pytestmark = pytest.mark.django_db


def test_a_worker_whose_claim_was_given_back_cannot_overwrite_the_next_attempt(alice):
    subscription = WebhookSubscriptionFactory(owner=alice)
    event = WebhookEvent.objects.create(owner=alice, type="task.created", body="{}")
    first = timezone.now()
    delivery = WebhookDelivery.objects.create(
        event=event, subscription=subscription, message_id="msg_engine", next_attempt_at=first
    )
    assert delivery_claim(CHANNEL, delivery_id=delivery.id, now=first)
    later = first + CLAIM_TIMEOUT + timedelta(seconds=1)
    assert claims_release_stale(CHANNEL, now=later) == [delivery.id]  # the first worker looked dead
    assert delivery_claim(CHANNEL, delivery_id=delivery.id, now=later)

    # The first worker comes back and reports success under its old claim.
    delivery.refresh_from_db()
    assert delivery_settle(delivery, claim=first, status="succeeded") is False

    delivery.refresh_from_db()
    assert (delivery.status, delivery.claimed_at, delivery.attempt_count) == ("sending", later, 2)
