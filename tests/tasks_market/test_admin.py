from __future__ import annotations

import pytest
from django.test import Client

from payments.models import LocalPayment, Payment
from tasks_market.models import Delivery, DeliveryAttempt, Task
from tests.support.admin import actions_of
from tests.support.factories import UserFactory
from tests.tasks_market.factories import AgentFactory, BidFactory, TaskFactory, delivering_task

pytestmark = pytest.mark.django_db


def test_admin_pages_render_and_never_show_secrets(admin_client):
    task, delivery = delivering_task(delivery_status="submitted")
    DeliveryAttempt.objects.create(
        delivery=delivery, number=1, round=1, url="https://a.example.com/", status="failed", error="agent said no"
    )
    agent = delivery.agent
    payment = Payment.objects.get(source=f"task:{task.pk}")
    Payment.objects.filter(pk=payment.pk).update(client_secret="pi_admin_secret_do_not_show")
    pages = [
        "/admin/tasks_market/task/",
        f"/admin/tasks_market/task/{task.id}/change/",
        "/admin/tasks_market/bid/",
        f"/admin/tasks_market/bid/{delivery.bid_id}/change/",
        "/admin/payments/payment/",
        f"/admin/payments/payment/{payment.id}/change/",
        "/admin/tasks_market/delivery/",
        f"/admin/tasks_market/delivery/{delivery.id}/change/",
        "/admin/tasks_market/agent/?q=Agent",
        f"/admin/tasks_market/agent/{agent.id}/change/",
        "/admin/tasks_market/benchmarkrun/",
    ]
    html = ""
    for page in pages:
        response = admin_client.get(page, secure=True)
        assert response.status_code == 200, page
        html += response.content.decode()

    assert agent.signing_secret not in html
    assert "pi_admin_secret_do_not_show" not in html
    assert "agent said no" in html  # the attempts are inline on the delivery


def test_cancel_action_goes_through_the_service(admin_client):
    open_task = TaskFactory()
    bid = BidFactory(task=open_task)
    paid, _ = delivering_task()

    admin_client.post(
        "/admin/tasks_market/task/",
        {"action": "cancel", "_selected_action": [str(open_task.id), str(paid.id)]},
        secure=True,
    )

    assert Task.objects.get(pk=open_task.pk).status == "cancelled"
    assert Task.objects.get(pk=paid.pk).status == "delivering"  # refused: not cancellable
    bid.refresh_from_db()
    assert bid.status == "rejected"


def test_retry_action_queues_an_attempt(admin_client, django_capture_on_commit_callbacks):
    _, delivery = delivering_task(delivery_status="failed", agent=AgentFactory(endpoint_url="http://127.0.0.1:9/x"))

    with django_capture_on_commit_callbacks(execute=True):
        admin_client.post(
            "/admin/tasks_market/delivery/",
            {"action": "retry", "_selected_action": [str(delivery.id)]},
            secure=True,
        )

    assert DeliveryAttempt.objects.filter(delivery=delivery).count() == 1  # port 9 refuses: attempt failed
    assert Delivery.objects.get(pk=delivery.pk).attempt_count == 1


def test_refund_action_only_for_disputed_tasks(admin_client):
    disputed, _ = delivering_task(delivery_status="disputed")
    payment = Payment.objects.get(source=f"task:{disputed.pk}")
    LocalPayment.objects.create(
        id=payment.provider_payment_id, amount_minor=15000, currency="usd", client_secret="s", status="succeeded"
    )
    delivering, _ = delivering_task()
    other = Payment.objects.get(source=f"task:{delivering.pk}")

    admin_client.post(
        "/admin/payments/payment/",
        {"action": "refund", "_selected_action": [str(payment.id), str(other.id)]},
        secure=True,
    )

    assert Payment.objects.get(pk=payment.pk).status == "refunded"
    assert LocalPayment.objects.get(id=payment.provider_payment_id).status == "refunded"
    assert Payment.objects.get(pk=other.pk).status == "succeeded"


# Each action needs a named permission; a party never refunds its own task (docs/decisions.md#staff-permissions).

VIEW_ALL = [
    "payments.view_payment",
    *(f"tasks_market.view_{model}" for model in ("task", "delivery", "agent", "disputeresolution")),
]


def logged_in(user) -> Client:
    client = Client()
    client.force_login(user)
    return client


@pytest.mark.parametrize(
    ("page", "action", "permission"),
    [
        ("payments/payment", "refund", "payments.change_payment"),
        ("tasks_market/delivery", "resolve", "tasks_market.add_disputeresolution"),
        ("tasks_market/delivery", "retry", "tasks_market.change_delivery"),
        ("tasks_market/disputeresolution", "finish", "tasks_market.add_disputeresolution"),
        ("tasks_market/task", "cancel", "tasks_market.change_task"),
        ("tasks_market/agent", "run_benchmark", "tasks_market.add_benchmarkrun"),
    ],
)
def test_an_action_is_offered_only_with_its_permission(page, action, permission):
    viewer = logged_in(UserFactory(is_staff=True, permissions=VIEW_ALL))
    actor = logged_in(UserFactory(is_staff=True, permissions=[*VIEW_ALL, permission]))

    seen = viewer.get(f"/admin/{page}/", secure=True)
    offered = actor.get(f"/admin/{page}/", secure=True)

    assert seen.status_code == offered.status_code == 200
    assert action not in actions_of(seen)
    assert action in actions_of(offered)


def refundable_payment(**task) -> Payment:
    disputed, _ = delivering_task(delivery_status="disputed", **task)
    payment = Payment.objects.get(source=f"task:{disputed.pk}")
    LocalPayment.objects.create(
        id=payment.provider_payment_id, amount_minor=15000, currency="usd", client_secret="s", status="succeeded"
    )
    return payment


def test_refund_with_view_permission_only_is_refused():
    payment = refundable_payment()
    viewer = logged_in(UserFactory(is_staff=True, permissions=VIEW_ALL))

    viewer.post("/admin/payments/payment/", {"action": "refund", "_selected_action": [str(payment.id)]}, secure=True)

    assert Payment.objects.get(pk=payment.pk).status == "succeeded"
    assert LocalPayment.objects.get(id=payment.provider_payment_id).status == "succeeded"


@pytest.mark.parametrize("party", ["poster", "seller"])
def test_a_party_cannot_refund_its_own_task_even_as_a_superuser(party):
    poster = UserFactory()
    payment = refundable_payment(poster=poster)
    user = poster if party == "poster" else payment.payee
    user.is_staff = user.is_superuser = True
    user.save(update_fields=["is_staff", "is_superuser"])

    client = logged_in(user)

    client.post("/admin/payments/payment/", {"action": "refund", "_selected_action": [str(payment.id)]}, secure=True)

    assert Payment.objects.get(pk=payment.pk).status == "succeeded"
    assert "cannot refund it" in client.get("/admin/payments/payment/", secure=True).content.decode()
