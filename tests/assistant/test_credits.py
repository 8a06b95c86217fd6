from __future__ import annotations

import datetime as dt

import pytest
from django.utils import timezone

from assistant.models import Assistant, CreditTransaction, ImageGeneration
from assistant.services import credits_adjust, image_generation_fail
from assistant.tasks import refund_stale_image_generations
from core.http.errors import InsufficientCredits
from tests.assistant.factories import ImageGenerationFactory
from tests.support.credits import credits_of, credits_set

pytestmark = pytest.mark.django_db


def test_an_adjustment_changes_the_balance_and_records_why(alice, staff):
    grant = credits_adjust(user=alice, delta=25, reason="Welcome bonus", actor=staff)
    take = credits_adjust(user=alice, delta=-5, reason="Goodwill credit reversed")

    alice.refresh_from_db()
    assert credits_of(alice) == 20
    assert (grant.delta, grant.balance_after, grant.kind, grant.reason, grant.actor) == (
        25,
        25,
        "adjustment",
        "Welcome bonus",
        staff,
    )
    assert (take.delta, take.balance_after) == (-5, 20)


def test_an_adjustment_never_takes_the_balance_below_zero(alice):
    credits_adjust(user=alice, delta=3, reason="grant")

    with pytest.raises(InsufficientCredits):
        credits_adjust(user=alice, delta=-4, reason="too much")

    alice.refresh_from_db()
    assert credits_of(alice) == 3
    assert CreditTransaction.objects.count() == 1


@pytest.mark.parametrize(("delta", "reason"), [(0, "nothing"), (5, "   ")])
def test_an_adjustment_needs_a_change_and_a_reason(alice, delta, reason):
    with pytest.raises(ValueError):
        credits_adjust(user=alice, delta=delta, reason=reason)


def test_failing_a_generation_refunds_once(alice):
    credits_set(alice, 0)
    generation = ImageGenerationFactory(user=alice, credit_cost=5)

    assert image_generation_fail(generation_id=generation.id, error="boom") is True
    assert image_generation_fail(generation_id=generation.id, error="boom") is False

    alice.refresh_from_db()
    assert credits_of(alice) == 5
    assert CreditTransaction.objects.filter(kind="image_refund").count() == 1


def test_abandoned_pending_generations_are_refunded_by_the_periodic_task(alice):
    stale = ImageGenerationFactory(user=alice, created_at=timezone.now() - dt.timedelta(minutes=20))
    fresh = ImageGenerationFactory(user=alice)
    done = ImageGenerationFactory(user=alice, status="succeeded", created_at=timezone.now() - dt.timedelta(hours=2))

    assert refund_stale_image_generations.delay().get() == 1
    assert refund_stale_image_generations.delay().get() == 0

    statuses = dict(ImageGeneration.objects.values_list("id", "status"))
    assert statuses == {stale.id: "failed", fresh.id: "pending", done.id: "succeeded"}
    assert credits_of(alice) == 1


def test_staff_adjust_credits_in_the_admin_with_a_reason(admin_client, alice, staff):
    response = admin_client.post(
        "/admin/assistant/credittransaction/add/",
        {"user": str(alice.pk), "delta": "40", "reason": "Conference promo"},
        secure=True,
    )

    assert response.status_code == 302, response.content.decode()[:2000]
    alice.refresh_from_db()
    assert credits_of(alice) == 40
    row = CreditTransaction.objects.get()
    assert (row.delta, row.reason, row.actor, row.balance_after) == (40, "Conference promo", staff, 40)


def test_the_admin_refuses_an_adjustment_below_zero(admin_client, alice):
    response = admin_client.post(
        "/admin/assistant/credittransaction/add/",
        {"user": str(alice.pk), "delta": "-1", "reason": "oops"},
        secure=True,
    )

    assert response.status_code == 200
    assert b"cannot go below 0" in response.content
    assert not CreditTransaction.objects.exists()


@pytest.mark.parametrize(
    "url",
    [
        "/admin/assistant/assistant/",
        "/admin/assistant/assistantmessage/",
        "/admin/assistant/assistantmessage/?role__exact=user&q=hello",
        "/admin/assistant/imagegeneration/",
        "/admin/assistant/imagegeneration/?status__exact=pending",
        "/admin/assistant/credittransaction/",
        "/admin/assistant/credittransaction/add/",
    ],
)
def test_admin_pages_render(admin_client, alice, url):
    assert admin_client.get(url, secure=True).status_code == 200


def test_admin_detail_pages_render(admin_client, alice_api, alice):
    alice_api.post("/api/v1/assistant/messages", {"content": "hello"}, format="json")
    credits_adjust(user=alice, delta=2, reason="test")
    generation = ImageGenerationFactory(user=alice)
    pages = [
        f"/admin/assistant/assistant/{Assistant.objects.get(user=alice).pk}/change/",
        f"/admin/assistant/imagegeneration/{generation.pk}/change/",
        f"/admin/assistant/credittransaction/{CreditTransaction.objects.get().pk}/change/",
    ]
    for page in pages:
        assert admin_client.get(page, secure=True).status_code == 200, page


def test_the_admin_action_fails_and_refunds_pending_generations(admin_client, alice):
    generation = ImageGenerationFactory(user=alice, credit_cost=3)

    response = admin_client.post(
        "/admin/assistant/imagegeneration/",
        {"action": "fail_and_refund", "_selected_action": [str(generation.pk)]},
        secure=True,
    )

    assert response.status_code == 302
    assert ImageGeneration.objects.get().status == "failed"
    assert credits_of(alice) == 3


def test_the_user_admin_shows_the_balance_it_does_not_let_staff_edit(admin_client, alice):
    credits_adjust(user=alice, delta=7, reason="test")

    listing = admin_client.get(f"/admin/accounts/user/?q={alice.email}", secure=True)
    page = admin_client.get(f"/admin/accounts/user/{alice.pk}/change/", secure=True)

    assert listing.status_code == page.status_code == 200
    assert '<td class="field-credits">7</td>' in listing.content.decode()
    assert 'name="credit_balance-0-credits"' not in page.content.decode()  # read-only: a ledger adjustment changes it
    assert '<div class="readonly">7</div>' in page.content.decode()
