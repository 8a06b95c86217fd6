"""Staff, not a superuser (`manage.py create_user --staff`), reach the staff-only API endpoints by the named Django
permissions they are given, not by `is_staff` alone (docs/decisions.md#staff-permissions)."""

from __future__ import annotations

from io import StringIO

import pytest
from django.contrib.auth.models import Group
from django.core.management import call_command

from accounts.models import User
from tests.conftest import client_with_token, jwt_for
from tests.payments.payouts.conftest import disputed
from tests.support.factories import UserFactory, permission_objects

pytestmark = pytest.mark.django_db

RESOLVE = {"outcome": "refund_full", "note": "Not usable."}


@pytest.fixture
def cli_staff() -> User:
    call_command("create_user", "ops@example.com", "--password", "correct horse battery", "--staff", stdout=StringIO())
    user = User.objects.get(email="ops@example.com")
    assert (user.is_staff, user.is_superuser) == (True, False)
    return user


def test_staff_without_permissions_are_refused(cli_staff, alice_api, api):
    seller_api = client_with_token(jwt_for(UserFactory(email="seller@example.com")))
    task_id = disputed(alice_api, seller_api, api)["task"]["id"]
    staff_api = client_with_token(jwt_for(cli_staff))

    resolved = staff_api.post(f"/api/v1/disputes/{task_id}/resolve", RESOLVE, format="json")
    snapshots = staff_api.get("/api/v1/admin/scrapers/scraperprovider/snapshots")

    assert (resolved.status_code, resolved.json()["code"]) == (403, "permission_denied")
    assert (snapshots.status_code, snapshots.json()["code"]) == (403, "permission_denied")


def test_staff_given_the_permissions_resolve_a_dispute_and_list_snapshots(cli_staff, alice_api, api):
    cli_staff.user_permissions.add(
        *permission_objects(["tasks_market.add_disputeresolution", "scrapers.view_snapshot"])
    )
    seller_api = client_with_token(jwt_for(UserFactory(email="seller@example.com")))
    task_id = disputed(alice_api, seller_api, api)["task"]["id"]
    staff_api = client_with_token(jwt_for(cli_staff))

    resolved = staff_api.post(f"/api/v1/disputes/{task_id}/resolve", RESOLVE, format="json")
    snapshots = staff_api.get("/api/v1/admin/scrapers/scraperprovider/snapshots")
    trigger = staff_api.post(
        "/api/v1/admin/scrapers/scraperprovider/snapshots", {"dataset_id": "x", "inputs": []}, format="json"
    )

    assert resolved.status_code == 200, resolved.content
    assert (resolved.json()["status"], resolved.json()["task_status"]) == ("applied", "cancelled")
    assert snapshots.status_code == 200, snapshots.content
    assert (trigger.status_code, trigger.json()["code"]) == (403, "permission_denied")  # add_snapshot not given


def test_a_group_gives_the_permissions(cli_staff, alice_api, api):
    group = Group.objects.create(name="Disputes")
    group.permissions.add(*permission_objects(["tasks_market.add_disputeresolution"]))
    cli_staff.groups.add(group)
    seller_api = client_with_token(jwt_for(UserFactory(email="seller@example.com")))
    task_id = disputed(alice_api, seller_api, api)["task"]["id"]

    resolved = client_with_token(jwt_for(cli_staff)).post(f"/api/v1/disputes/{task_id}/resolve", RESOLVE, format="json")

    assert resolved.status_code == 200, resolved.content
