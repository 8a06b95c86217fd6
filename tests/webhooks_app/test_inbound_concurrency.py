"""Twenty copies of one event arriving at the same moment apply it exactly once (real threads, PostgreSQL)."""

from __future__ import annotations

import threading

import pytest
from django.db import connection

from payments.provider_events import build_event
from tests.conftest import HttpsAPIClient
from tests.support.credits import credits_add, credits_of
from tests.support.factories import UserFactory
from tests.webhooks_app.conftest import handling, post_event
from webhooks_app.models import InboundDelivery, InboundEvent, InboundEventStatus

COPIES = 20


@pytest.mark.django_db(transaction=True)
def test_twenty_concurrent_copies_apply_the_event_exactly_once(settings):
    settings.PAYMENTS_WEBHOOK_SECRET = ["whsec_concurrency"]
    user = UserFactory()
    signed = build_event("test.concurrent", {"id": "pi_concurrent"}, secret="whsec_concurrency")
    barrier = threading.Barrier(COPIES)
    results: list[tuple[int, str]] = []

    def handler(event):
        credits_add(user, 1)

    def deliver():
        try:
            barrier.wait(timeout=30)
            response = post_event(HttpsAPIClient(), signed)
            results.append((response.status_code, response.json().get("status")))
        finally:
            connection.close()

    with handling("test.concurrent", handler):
        threads = [threading.Thread(target=deliver) for _ in range(COPIES)]
        for thread in threads:
            thread.start()
        for thread in threads:
            thread.join(timeout=60)

    user.refresh_from_db()
    assert credits_of(user) == 1
    assert sorted(results) == [(200, "duplicate")] * (COPIES - 1) + [(200, "processed")]
    assert InboundEvent.objects.get().status == InboundEventStatus.PROCESSED
    assert InboundDelivery.objects.filter(event_id=signed.event_id).count() == COPIES
