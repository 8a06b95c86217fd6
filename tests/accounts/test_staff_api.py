"""Staff, not a superuser (`manage.py create_user --staff`), reach the staff-only API endpoints: they ask for
`is_staff` only."""

from __future__ import annotations

from io import StringIO

import pytest
from django.core.management import call_command

from accounts.models import User
from tests.conftest import client_with_token, jwt_for
from tests.payouts.conftest import disputed
from tests.support.factories import UserFactory

pytestmark = pytest.mark.django_db


@pytest.fixture
def cli_staff_api():
    call_command("create_user", "ops@example.com", "--password", "correct horse battery", "--staff", stdout=StringIO())
    user = User.objects.get(email="ops@example.com")
    assert (user.is_staff, user.is_superuser) == (True, False)
    return client_with_token(jwt_for(user))


def test_staff_resolve_a_dispute_and_list_snapshots(cli_staff_api, alice_api, api):
    seller_api = client_with_token(jwt_for(UserFactory(email="seller@example.com")))
    task_id = disputed(alice_api, seller_api, api)["task"]["id"]

    resolved = cli_staff_api.post(
        f"/api/v1/disputes/{task_id}/resolve", {"outcome": "refund_full", "note": "Not usable."}, format="json"
    )
    snapshots = cli_staff_api.get("/api/v1/admin/scrapers/scraperprovider/snapshots")

    assert resolved.status_code == 200, resolved.content
    assert (resolved.json()["status"], resolved.json()["task_status"]) == ("applied", "cancelled")
    assert snapshots.status_code == 200, snapshots.content
