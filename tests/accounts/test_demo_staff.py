"""The demo staff user (`manage.py ensure_demo_user`, `make run`) works the admin pages the docs send staff
to, by the named permissions of its group, not as a superuser."""

from __future__ import annotations

from decimal import Decimal
from io import StringIO

import pytest
from django.contrib import admin
from django.core.management import call_command
from django.test import Client

from accounts.management.commands.ensure_demo_user import DEMO_EMAIL, DEMO_STAFF_GROUP, demo_staff_permissions
from accounts.models import User
from demo_seed.management.commands.seed_demo import Command as SeedDemo
from demo_seed.management.commands.seed_demo import Progress
from payments.models import PaymentStatus
from tasks_market.models import Delivery, DisputeResolution
from tests.conftest import client_with_token, jwt_for
from tests.payments.payouts.conftest import disputed, in_review, payment_of
from tests.support.admin import actions_of
from tests.support.factories import UserFactory

pytestmark = pytest.mark.django_db

PASSWORD = "a-generated-demo-password"


@pytest.fixture
def demo(settings) -> User:
    settings.DEMO_USER_PASSWORD = PASSWORD
    call_command("ensure_demo_user", stdout=StringIO())
    return User.objects.get(email=DEMO_EMAIL)


@pytest.fixture
def demo_admin(demo) -> Client:
    """The demo user, logged in through the admin's login form with the password `make run` printed."""
    client = Client()
    login = client.post("/admin/login/", {"username": DEMO_EMAIL, "password": PASSWORD, "next": "/admin/"}, secure=True)
    assert login.status_code == 302 and login["Location"] == "/admin/", login.content
    return client


@pytest.fixture
def seller_api():
    return client_with_token(jwt_for(UserFactory(email="seller@example.com")))


def test_the_demo_user_is_staff_by_its_group_only(demo):
    assert (demo.is_staff, demo.is_superuser) == (True, False)
    assert list(demo.groups.values_list("name", flat=True)) == [DEMO_STAFF_GROUP]
    assert not demo.user_permissions.exists()
    assert demo.has_perm("payments.view_ledgerline") and demo.has_perm("tasks_market.add_disputeresolution")
    assert not demo.has_perm("payments.change_earning")  # the books are read-only
    assert demo.has_perm("accounts.view_user") and not demo.has_perm("accounts.change_user")
    assert not any(demo.has_perm(f"auth.{action}_group") for action in ("view", "add", "change", "delete"))

    call_command("ensure_demo_user", stdout=StringIO())  # idempotent: the same group, the same permissions
    assert demo.groups.get().permissions.count() == len(demo_staff_permissions())


@pytest.mark.parametrize(
    ("page", "actions"),
    [
        # docs/payouts.md: the payment admin lists cancelled payments, and refunds a released one
        ("/admin/payments/payment/?status__exact=cancelled", {"refund"}),
        ("/admin/tasks_market/delivery/", {"resolve", "retry"}),  # Deliveries → "Resolve the dispute"
        ("/admin/tasks_market/disputeresolution/", {"finish"}),  # the Dispute resolutions list, "Finish applying"
        ("/admin/payments/earning/?chargeback_state__exact=frozen", set()),
        ("/admin/payments/payout/", set()),
        ("/admin/payments/payoutaccount/", set()),
        ("/admin/payments/chargeback/?status__exact=open", set()),  # Payments → Chargebacks
        ("/admin/payments/ledgerentry/", set()),
        ("/admin/payments/ledgerline/?source=task:6f1c0d4e-2b7a-4c58-9a0e-3d5f8b1e7a20", set()),  # one task
    ],
)
def test_the_demo_user_opens_the_pages_the_docs_name(demo_admin, page, actions):
    response = demo_admin.get(page, secure=True)

    assert response.status_code == 200, page
    assert actions <= actions_of(response)


def test_the_demo_user_opens_the_ledger_of_a_seller(demo_admin, demo):
    response = demo_admin.get(f"/admin/payments/ledgerline/?owner_id={demo.pk}", secure=True)

    assert response.status_code == 200


def test_the_demo_user_opens_every_change_list_of_the_admin(demo_admin):
    """A model in the admin whose app DEMO_STAFF_GRANTS leaves out would be a 403 here. Only the admin pages of
    the libraries are out of its reach, on purpose."""
    pages = [
        f"/admin/{model._meta.app_label}/{model._meta.model_name}/"
        for model in admin.site._registry
        if model._meta.app_label not in ("auth", "token_blacklist")
    ]
    assert len(pages) > 30

    failed = {page: status for page in pages if (status := demo_admin.get(page, secure=True).status_code) != 200}

    assert failed == {}
    assert demo_admin.get("/admin/token_blacklist/outstandingtoken/", secure=True).status_code == 403


def test_the_demo_user_cannot_raise_its_own_rights(demo_admin, demo):
    own = f"/admin/accounts/user/{demo.pk}/change/"

    assert demo_admin.get(own, secure=True).status_code == 200  # view only
    assert demo_admin.post(own, {"email": DEMO_EMAIL, "is_superuser": "on"}, secure=True).status_code == 403
    assert demo_admin.get("/admin/auth/group/", secure=True).status_code == 403
    demo.refresh_from_db()
    assert not demo.is_superuser


def test_the_demo_user_resolves_a_dispute_in_the_admin(demo_admin, demo, alice_api, seller_api, api):
    task_id = disputed(alice_api, seller_api, api)["task"]["id"]
    delivery = demo_admin.post(
        "/admin/tasks_market/delivery/",
        {"action": "resolve", "_selected_action": [str(Delivery.objects.get(task_id=task_id).pk)]},
        secure=True,
    )
    assert delivery.status_code == 302
    form = demo_admin.get(delivery["Location"], secure=True)

    done = demo_admin.post(
        delivery["Location"], {"outcome": "split", "refund_amount": "30.00", "note": "Partly usable."}, secure=True
    )

    assert form.status_code == 200 and b"Not what we asked." in form.content
    assert done.status_code == 302
    resolution = DisputeResolution.objects.get()
    assert (resolution.outcome, resolution.status, resolution.resolved_by) == ("split", "applied", demo)
    ledger = demo_admin.get(f"/admin/payments/ledgerline/?source=task:{task_id}", secure=True)
    assert ledger.status_code == 200 and b"poster:refunds" in ledger.content


def test_the_demo_user_refunds_a_released_payment_in_the_admin(demo_admin, alice_api, seller_api, api):
    task_id = in_review(alice_api, seller_api, api)["task"]["id"]
    assert alice_api.post(f"/api/v1/tasks/{task_id}/delivery/approve").status_code == 200
    payment = payment_of(task_id)
    assert demo_admin.get(f"/admin/payments/payment/{payment.pk}/change/", secure=True).status_code == 200

    demo_admin.post(
        "/admin/payments/payment/", {"action": "refund", "_selected_action": [str(payment.pk)]}, secure=True
    )

    payment.refresh_from_db()
    assert (payment.status, payment.refunded_amount) == (PaymentStatus.REFUNDED, Decimal("150.00"))


def test_seed_demo_makes_the_same_demo_user(settings):
    seed = SeedDemo(stdout=StringIO())
    seed.password, seed.progress = PASSWORD, Progress(seed.stdout, 1)

    user = seed.demo_user()

    assert (user.is_staff, user.is_superuser) == (True, False)
    assert list(user.groups.values_list("name", flat=True)) == [DEMO_STAFF_GROUP]
    assert user.has_perm("payments.view_earning")


def test_an_older_demo_user_with_permissions_one_by_one_gets_the_group_instead(settings):
    settings.DEMO_USER_PASSWORD = PASSWORD
    older = User.objects.create_user(DEMO_EMAIL, PASSWORD, is_staff=True)
    older.user_permissions.set(demo_staff_permissions()[:5])

    call_command("ensure_demo_user", stdout=StringIO())

    assert not older.user_permissions.exists()
    assert list(older.groups.values_list("name", flat=True)) == [DEMO_STAFF_GROUP]
