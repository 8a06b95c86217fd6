"""Production refuses a metrics exporter on an address other machines reach without a bearer token
(docs/operations.md#prometheus-metrics): `manage.py check --deploy`, as the release step runs it, in a
subprocess with production settings."""

from __future__ import annotations

import secrets

from tests.security.test_production_payments_check import deploy_check

REAL_PROVIDER = {"PAYMENTS_PROVIDER": "stripe", "STRIPE_API_KEY": "sk_test_" + secrets.token_hex(12)}


def test_production_refuses_a_public_metrics_address_without_a_token():
    result = deploy_check(**REAL_PROVIDER, METRICS_HOST="0.0.0.0")

    assert result.returncode != 0
    assert "core.E001" in result.stderr + result.stdout
    assert "METRICS_TOKEN" in result.stderr + result.stdout  # the error names the way out


def test_a_token_or_loopback_passes():
    with_token = deploy_check(**REAL_PROVIDER, METRICS_HOST="0.0.0.0", METRICS_TOKEN=secrets.token_hex(32))
    loopback = deploy_check(**REAL_PROVIDER)

    assert with_token.returncode == 0, with_token.stdout + with_token.stderr
    assert loopback.returncode == 0, loopback.stdout + loopback.stderr
