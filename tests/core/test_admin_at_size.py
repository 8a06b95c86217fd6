"""The staff change lists of tables that grow without bound: a page costs what its rows cost, never a
COUNT(*) over the whole table, and a bounded number of queries (docs/decisions.md#admin-change-lists-at-size)."""

from __future__ import annotations

import pytest
from django.db import connection
from django.test.utils import CaptureQueriesContext

from accounts.models import User
from core.admin import EXACT_COUNT_CAP, BoundedCountPaginator
from tests.support.factories import UserFactory
from tests.tasks_market.factories import BidFactory, delivering_task
from tests.webhooks_app.factories import WebhookSubscriptionFactory
from webhooks_app.models import WebhookDelivery, WebhookEvent

pytestmark = pytest.mark.django_db

PAGES = [
    "/admin/tasks_market/task/",
    "/admin/tasks_market/task/?status__exact=open&budget_currency=usd&q=Task",
    "/admin/tasks_market/bid/",
    "/admin/tasks_market/bid/?status__exact=pending&q=bidder",
    "/admin/payments/payment/",
    "/admin/payments/payment/?status__exact=succeeded&provider=local&q=pi_",
    "/admin/tasks_market/delivery/",
    "/admin/tasks_market/delivery/?status__exact=dispatched&q=Task",
    "/admin/webhooks_app/webhookdelivery/",
    "/admin/webhooks_app/webhookdelivery/?status__exact=pending&event__type=task.created&q=msg_",
    "/admin/accounts/user/",
    "/admin/accounts/user/?is_active__exact=1&q=user",
]


def _rows(count: int) -> None:
    subscription = WebhookSubscriptionFactory()
    for n in range(count):
        task, _ = delivering_task()
        BidFactory(task=task)
        event = WebhookEvent.objects.create(owner=subscription.owner, type="task.created", body="{}")
        WebhookDelivery.objects.create(event=event, subscription=subscription, message_id=f"msg_{n}_{task.pk}")


def _queries(admin_client, page: str) -> list[str]:
    with CaptureQueriesContext(connection) as captured:
        response = admin_client.get(page, secure=True)
    assert response.status_code == 200, page
    return [query["sql"] for query in captured.captured_queries]


@pytest.mark.parametrize("page", PAGES)
def test_a_change_list_page_runs_the_same_few_queries_and_no_full_count(admin_client, page):
    _rows(2)
    _queries(admin_client, page)  # the process's caches (rate-limit overrides, the session) warm
    few = _queries(admin_client, page)
    _rows(4)
    more = _queries(admin_client, page)

    assert len(more) == len(few) <= 12, more
    counts = [sql for sql in more if "COUNT(" in sql.upper()]
    assert counts, "the page counts its rows"
    assert all("LIMIT" in sql.upper() for sql in counts), counts  # capped, never the whole table


def test_past_the_cap_the_count_is_the_planners_estimate_without_a_full_count():
    with connection.cursor() as cursor:
        cursor.execute(
            "INSERT INTO accounts_user (id, password, is_superuser, email, is_staff, is_active, date_joined,"
            " credits) SELECT gen_random_uuid(), '!', false, 'bulk' || n || '@example.com', false, true,"
            " now(), 0 FROM generate_series(1, %s) AS n",
            [EXACT_COUNT_CAP + 50],
        )
        cursor.execute("ANALYZE accounts_user")

    with CaptureQueriesContext(connection) as captured:
        count = BoundedCountPaginator(User.objects.all(), 100).count

    assert EXACT_COUNT_CAP < count <= 2 * EXACT_COUNT_CAP
    assert not [q["sql"] for q in captured.captured_queries if "COUNT(" in q["sql"].upper() and "LIMIT" not in q["sql"]]


def test_below_the_cap_the_count_is_exact():
    UserFactory.create_batch(3)

    assert BoundedCountPaginator(User.objects.all(), 2).count == User.objects.count()
