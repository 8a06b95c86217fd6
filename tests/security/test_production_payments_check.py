"""Production refuses the self-settling local payment provider (its public checkout page credits any
top-up for free) unless a demo deployment opts in by name (see docs/operations.md#payments-in-production).
Run as `make serve` runs it: `manage.py check --deploy` with production settings, in a subprocess."""

from __future__ import annotations

import secrets
import subprocess

import pytest

from tests.support.deploy_check import run_deploy_check

OPT_IN = "PAYMENTS_ALLOW_LOCAL_PROVIDER_IN_PRODUCTION"
CHECK_ID = "payments.E001"


def deploy_check(**environment: str) -> subprocess.CompletedProcess:
    # The other local stand-ins are allowed, so that what is checked here is payments' check alone.
    return run_deploy_check(
        IMAGES_ALLOW_LOCAL_PROVIDER_IN_PRODUCTION="true",
        PUBLISHING_ALLOW_LOCAL_PROVIDER_IN_PRODUCTION="true",
        SOCIAL_OAUTH_ALLOW_LOCAL_PROVIDER_IN_PRODUCTION="true",
        SEO_ALLOW_LOCAL_PROVIDER_IN_PRODUCTION="true",
        **environment,
    )


@pytest.mark.parametrize("environment", [{}, {"PAYMENTS_PROVIDER": "local"}, {OPT_IN: "false"}])
def test_production_refuses_the_local_payment_provider(environment):
    result = deploy_check(**environment)

    assert result.returncode != 0
    assert CHECK_ID in result.stderr + result.stdout
    assert OPT_IN in result.stderr + result.stdout  # the error names the way out


def test_production_refuses_stripe_without_its_key():
    result = deploy_check(PAYMENTS_PROVIDER="stripe")

    assert result.returncode != 0
    assert CHECK_ID in result.stderr + result.stdout


def test_a_real_provider_passes():
    result = deploy_check(PAYMENTS_PROVIDER="stripe", STRIPE_API_KEY="sk_test_" + secrets.token_hex(12))

    assert result.returncode == 0, result.stdout + result.stderr
    assert OPT_IN not in result.stderr


def test_the_named_opt_in_lets_a_demo_deployment_start_and_says_so_loudly():
    result = deploy_check(**{OPT_IN: "true"})

    assert result.returncode == 0, result.stdout + result.stderr
    warnings = [line for line in result.stderr.splitlines() if '"WARNING"' in line and OPT_IN in line]
    assert warnings, result.stderr
