"""schemathesis over every operation of the live schema, through the real TLS server.

Fails on any 5xx and on any response (status, content type, headers, body) that the schema does
not describe. Each later endpoint is covered automatically, because the run reads /openapi.json.
"""

from __future__ import annotations

import pytest

from core.models import RateLimitOverride
from tests.conftest import jwt_for
from tests.support.factories import UserFactory
from tests.support.servers import run_schemathesis


@pytest.mark.fuzz
@pytest.mark.timeout(2400)  # a safety net: the run is bounded by its example count
@pytest.mark.django_db(transaction=True)
def test_schemathesis_finds_no_server_errors_or_schema_mismatches(tls_server, tmp_path):
    # The fuzzer is one client sending thousands of requests: lift its caps, as staff would.
    RateLimitOverride.objects.create(network="127.0.0.1", rule="*", limit=10_000_000, reason="fuzzing")
    user = UserFactory(email="fuzzer@example.com", credits=1_000)

    result = run_schemathesis(tls_server, jwt_for(user), tmp_path / "report")

    print(result.stdout[-3000:])
    assert result.returncode == 0, result.stdout[-20000:] + result.stderr[-5000:]
