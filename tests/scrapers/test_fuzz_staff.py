"""schemathesis over the scraper operations as a staff user (the suite-wide run's user is not staff,
so it only sees their 401/403 answers). Bright Data is a local stand-in, so nothing leaves the machine."""

from __future__ import annotations

import itertools

import pytest

from core.models import RateLimitOverride
from tests.conftest import jwt_for
from tests.scrapers.factories import SnapshotFactory
from tests.support.factories import UserFactory
from tests.support.servers import run_schemathesis


@pytest.mark.fuzz
@pytest.mark.timeout(900)
@pytest.mark.django_db(transaction=True)
def test_schemathesis_as_staff_finds_no_errors_on_the_scraper_operations(
    tls_server,
    tmp_path,
    settings,
    brightdata_server,
):
    settings.SCRAPER_PROVIDER = "brightdata"
    numbers = itertools.count()

    def brightdata(request):
        if request["method"] == "POST":
            return 200, {"snapshot_id": f"s_fuzz{next(numbers)}"}
        return 200, {"status": "running"}

    brightdata_server.reply = brightdata
    RateLimitOverride.objects.create(network="127.0.0.1", rule="*", limit=10_000_000, reason="fuzzing")
    staff = UserFactory(
        email="fuzzing-staff@example.com",
        is_staff=True,
        permissions=["scrapers.view_snapshot", "scrapers.add_snapshot"],  # docs/decisions.md#staff-permissions
    )
    SnapshotFactory.create_batch(3)

    result = run_schemathesis(
        tls_server,
        jwt_for(staff),
        tmp_path / "report",
        "--include-path-regex",
        "^/api/v1/admin/scrapers/",
        max_examples=20,  # generated cases per operation, beside the coverage phase's deterministic ones
        timeout=850,
    )

    print(result.stdout[-3000:])
    assert result.returncode == 0, result.stdout[-20000:] + result.stderr[-5000:]
