"""schemathesis over the scraper operations as a staff user (the suite-wide run's user is not staff,
so it only sees their 401/403 answers). Bright Data is a local stand-in, so nothing leaves the machine."""

from __future__ import annotations

import itertools
import subprocess

import pytest

from core.models import RateLimitOverride
from tests.conftest import jwt_for
from tests.factories import UserFactory
from tests.scrapers.factories import SnapshotFactory
from tests.test_fuzz import CHECKS, SCHEMATHESIS, tls_server  # noqa: F401  (tls_server is a fixture)


@pytest.mark.fuzz
@pytest.mark.timeout(900)
@pytest.mark.django_db(transaction=True)
def test_schemathesis_as_staff_finds_no_errors_on_the_scraper_operations(
    tls_server,  # noqa: F811
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
    staff = UserFactory(email="fuzzing-staff@example.com", is_staff=True)
    SnapshotFactory.create_batch(3)

    result = subprocess.run(
        [
            SCHEMATHESIS,
            "run",
            f"{tls_server}/openapi.json",
            "--include-path-regex",
            "^/api/v1/admin/scrapers/",
            "--header",
            f"Authorization: Bearer {jwt_for(staff)}",
            "--tls-verify",
            "false",
            "--checks",
            CHECKS,
            "--phases",
            "examples,coverage,fuzzing",
            "--max-examples",
            "50",
            "--seed",
            "20261121",
            "--generation-database",
            "none",
            "--workers",
            "1",
            "--suppress-health-check",
            "all",
            "--report-dir",
            str(tmp_path / "report"),
        ],
        capture_output=True,
        text=True,
        timeout=850,
        check=False,
    )

    print(result.stdout[-3000:])
    assert result.returncode == 0, result.stdout[-20000:] + result.stderr[-5000:]
